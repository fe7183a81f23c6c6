import { Inject, Injectable, Logger } from '@nestjs/common';
import { MigratorWindowRepository, NewTask, TaskRepository, TimerEntity, TimerRepository } from '@timer/dal';
import { FireRef, RedisLock, SliceIndex } from '@timer/redis';
import { fireTimesBetween, ScheduleSpec } from '@timer/schedule';
import { Clock, CLOCK } from '../common/clock';
import { MigratorConfig } from '../config/migrator.env';
import { MigratorMetrics } from './migrator.metrics';
import { firesFrom, isoWindow, planRange, planWindows, Window } from './window-plan';

/** Rows buffered before they are written, so a page of seconds-level timers never builds huge arrays. */
export const FLUSH_ROWS = 10_000;

/** What one window run did. */
export type WindowOutcome =
  | { window: Window; status: 'completed'; timers: number; fires: number; inserted: number; ms: number }
  | { window: Window; status: 'busy' | 'already-completed' }
  | { window: Window; status: 'failed'; error: string };

export type WindowStore = Pick<MigratorWindowRepository, 'completedBounds' | 'completedBetween' | 'isCompleted' | 'markCompleted'>;
export type TimerSource = Pick<TimerRepository, 'enabledPage'>;
export type TaskSink = Pick<TaskRepository, 'insertIgnore'>;
export type FireIndex = Pick<SliceIndex, 'add'>;
export type Locks = Pick<RedisLock, 'tryAcquire'>;

class LockLostError extends Error {}
class StoppingError extends Error {}

/**
 * Expands enabled timers into task rows and slice index entries, one window at a time (see
 * docs/pipeline.md, "migrator"). Every step is idempotent: rows are INSERT IGNORE on the unique
 * (timer_id, run_at), index entries are ZADD of the fire id; a window is recorded as completed only
 * after all of it is written, so a crash anywhere re-runs it.
 */
@Injectable()
export class MigratorService {
  private readonly logger = new Logger(MigratorService.name);
  private stopping = false;

  constructor(
    @Inject(MigratorWindowRepository) private readonly windows: WindowStore,
    @Inject(TimerRepository) private readonly timers: TimerSource,
    @Inject(TaskRepository) private readonly tasks: TaskSink,
    @Inject(SliceIndex) private readonly index: FireIndex,
    @Inject(RedisLock) private readonly locks: Locks,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly config: MigratorConfig,
    private readonly metrics: MigratorMetrics,
  ) {}

  /** Makes the window run in progress stop at its next page (its lock is released, it is not completed). */
  stop(): void {
    this.stopping = true;
  }

  /** One tick: every window not completed from the last completed one through the current + 2. */
  async tick(): Promise<WindowOutcome[]> {
    const now = this.clock.now();
    const { windowMs, catchUpMs } = this.config;
    const bounds = await this.windows.completedBounds();
    const range = planRange(now, windowMs, catchUpMs, bounds);
    const completed = new Set(await this.windows.completedBetween(range.from, range.to));
    const plan = planWindows({ now, windowMs, catchUpMs, bounds, completed });
    if (plan.skipped) {
      this.logger.warn(
        `windows ${isoWindow({ start: plan.skipped.from, end: plan.skipped.to })} were never migrated and lie behind the catch-up horizon ` +
          `(TIMER_MIGRATOR_CATCHUP_MINUTES=${catchUpMs / 60_000}): their fires are not created`,
      );
    }
    const outcomes: WindowOutcome[] = [];
    for (const w of plan.windows) {
      if (this.stopping) break;
      outcomes.push(await this.migrateWindow(w));
    }
    return outcomes;
  }

  /** Migrates one window under its lock; never throws. */
  async migrateWindow(window: Window): Promise<WindowOutcome> {
    const lock = await this.locks.tryAcquire({ resource: `migrate:${window.start}`, ttlMs: this.config.lockLeaseMs });
    if (!lock) return { window, status: 'busy' };
    let lost = false;
    // Extend the lease while working, so a slow page does not let another replica take the window.
    const heartbeat = setInterval(() => {
      void lock.extend(this.config.lockLeaseMs).then((ok) => {
        if (!ok) lost = true;
      });
    }, Math.max(1000, Math.floor(this.config.lockLeaseMs / 3)));
    heartbeat.unref();
    const started = Date.now();
    try {
      // Re-check under the lock: another replica may have completed it since the tick listed it.
      if (await this.windows.isCompleted(window.start)) return { window, status: 'already-completed' };
      const counts = await this.expand(window, () => {
        if (lost) throw new LockLostError(`lost the lock of window ${isoWindow(window)}`);
        if (this.stopping) throw new StoppingError('stopping');
      });
      // The lease may have lapsed during the last page; completing is still right (the work is done).
      await this.windows.markCompleted(window.start, window.end);
      const ms = Date.now() - started;
      this.metrics.windowsCompleted.inc();
      this.metrics.firesCreated.inc(counts.inserted);
      this.metrics.lastCompletedWindow.set(window.start / 1000);
      this.metrics.windowDuration.observe(ms / 1000);
      this.logger.log(`window ${isoWindow(window)} completed: ${counts.timers} timers, ${counts.fires} fires (${counts.inserted} new rows), ${ms} ms`);
      return { window, status: 'completed', ...counts, ms };
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      if (!(e instanceof StoppingError)) {
        this.metrics.windowsFailed.inc();
        this.logger.error(`window ${isoWindow(window)} failed (retried next tick): ${e instanceof LockLostError ? error : e instanceof Error ? e.stack : error}`);
      }
      return { window, status: 'failed', error };
    } finally {
      clearInterval(heartbeat);
      await lock.release();
    }
  }

  /** Pages through enabled timers and writes each page's fires (rows first, then the index). */
  private async expand(window: Window, checkpoint: () => void): Promise<{ timers: number; fires: number; inserted: number }> {
    const now = this.clock.now();
    const { pageSize, catchUpMs } = this.config;
    let after: string | null = null;
    let timers = 0;
    let fires = 0;
    let inserted = 0;
    let rows: NewTask[] = [];
    const flush = async () => {
      if (rows.length === 0) return;
      const batch = rows;
      rows = [];
      // Rows before index entries: every index entry (and so every message) names an existing row.
      inserted += await this.tasks.insertIgnore(batch);
      await this.index.add(batch.map((r): FireRef => ({ timerId: r.timerId, runAt: r.runAt })));
    };
    for (;;) {
      checkpoint();
      const page: TimerEntity[] = await this.timers.enabledPage(after, pageSize);
      if (page.length === 0) break;
      for (const t of page) {
        const runAts = this.firesOf(t, window, now, catchUpMs);
        fires += runAts.length;
        for (const runAt of runAts) rows.push({ app: t.app, timerId: t.id, runAt });
        if (rows.length >= FLUSH_ROWS) await flush();
      }
      await flush();
      timers += page.length;
      after = page[page.length - 1].id;
      if (page.length < pageSize) break;
    }
    return { timers, fires, inserted };
  }

  private firesOf(t: TimerEntity, window: Window, now: number, catchUpMs: number): number[] {
    const from = firesFrom(window, t.updatedAt instanceof Date ? t.updatedAt.getTime() : NaN, now, catchUpMs);
    if (from >= window.end) return [];
    try {
      return fireTimesBetween(specOf(t), from, window.end);
    } catch (e) {
      // A stored schedule that no longer evaluates must not block every other timer of the window.
      this.logger.error(`timer ${t.id}: cannot compute its fires in ${isoWindow(window)}: ${(e as Error).message}`);
      return [];
    }
  }
}

export function specOf(t: Pick<TimerEntity, 'cron' | 'runAt' | 'timeZone'>): ScheduleSpec {
  return t.cron !== null ? { cron: t.cron, timeZone: t.timeZone } : { runAt: Number(t.runAt), timeZone: t.timeZone };
}
