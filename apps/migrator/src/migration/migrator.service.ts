import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { CLOCK, NowClock } from '@timer/platform';
import { MigrateRangeMessage, MINUTE_MS, minuteOf, preparedWindows } from '@timer/contracts';
import { DueCursor, MigratorWindowRepository, NewTask, NextFireAdvance, TimerEntity, TimerRepository } from '@timer/dal';
import { bucketsForTriggers, LOCK_RESOURCES, RedisLock, SliceIndex, TriggerSlots } from '@timer/redis';
import { FireRegenerator, FireWriter } from '@timer/fire';
import { MigratorConfig } from '../config/migrator.env';
import { ExpansionPacer, FLUSH_ROWS } from './expansion-pacer';
import { MigratorMetrics } from './migrator.metrics';
import { firesFrom, isoWindow, planRange, planWindows, Window } from './window-plan';

/** Timers whose unknown next_fire_at (0) one statement resolves. */
export const RESOLVE_BATCH = 5_000;

/** What one window run did. */
export type WindowOutcome =
  | { window: Window; status: 'completed'; timers: number; fires: number; inserted: number; ms: number }
  | { window: Window; status: 'busy' | 'already-completed' }
  | { window: Window; status: 'failed'; error: string };

export type WindowStore = Pick<MigratorWindowRepository, 'completedBounds' | 'completedBetween' | 'isCompleted' | 'markCompleted'>;
export type TimerSource = Pick<TimerRepository, 'duePage' | 'advanceNextFire' | 'resolveUnknownNextFire'>;
export type FireSink = Pick<FireWriter, 'write' | 'publishDue'>;
export type Locks = Pick<RedisLock, 'tryAcquire'>;
export type ChangedTimers = Pick<FireRegenerator, 'recheck'>;
export type BucketRecords = Pick<SliceIndex, 'recordBuckets' | 'recordedBuckets' | 'bucketsFor'>;
export type TriggerSlotSource = Pick<TriggerSlots, 'live'>;
/** The live triggers' slots ({@link TriggerSlots}): without it (tests) only `TIMER_SLICE_BUCKETS_MAX` bounds a minute's buckets. */
export const TRIGGER_SLOTS = Symbol('TRIGGER_SLOTS');

/** Counts of expanded timers and fires, per window or per range. */
export interface ExpandCounts {
  timers: number;
  fires: number;
  inserted: number;
}

/**
 * How a large window is split across migrator replicas (RangeCoordinator in production): where the
 * ranges start, a topic to hand them out on, and a record of the ranges already done.
 */
export interface RangeCoordination {
  /** Ids cutting the timers due before `beforeMs` into ranges of `size` (ascending); none when they fit one range. */
  boundaries(size: number, beforeMs: number): Promise<string[]>;
  publish(range: MigrateRangeMessage): Promise<void>;
  /** The counts a finished range recorded, or null while it is not done. */
  done(range: MigrateRangeMessage): Promise<ExpandCounts | null>;
  markDone(range: MigrateRangeMessage, counts: ExpandCounts): Promise<void>;
}

export const RANGE_COORDINATION = Symbol('RANGE_COORDINATION');

/** Most ranges one window is split into (each range holds TIMER_MIGRATOR_RANGE_TIMERS timers). */
export const MAX_RANGES = 1_000;
/** How long the window's lock holder waits for its ranges before it gives up (retried next tick). */
export const RANGE_WAIT_MS = 15 * 60_000;
/** How often the lock holder looks whether every range is done. */
export const RANGE_POLL_MS = 250;

/** What handling one range message did. */
export type RangeOutcome = 'migrated' | 'skipped';

class LockLostError extends Error {}
class StoppingError extends Error {}

/**
 * Expands enabled timers into task rows and slice index entries, one window at a time (see
 * docs/architecture.md, "migrator"). Every step is idempotent: rows are INSERT IGNORE on the unique
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
    @Inject(FireWriter) private readonly writer: FireSink,
    @Inject(RedisLock) private readonly locks: Locks,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly config: MigratorConfig,
    private readonly metrics: MigratorMetrics,
    @Inject(FireRegenerator) private readonly changed: ChangedTimers,
    @Inject(SliceIndex) private readonly buckets: BucketRecords,
    @Optional() @Inject(RANGE_COORDINATION) private readonly ranges?: RangeCoordination,
    @Optional() private readonly pacer?: ExpansionPacer,
    @Optional() @Inject(TRIGGER_SLOTS) private readonly triggers?: TriggerSlotSource,
  ) {}

  /** Makes the window run in progress stop at its next page (its lock is released, it is not completed). */
  stop(): void {
    this.stopping = true;
  }

  /**
   * One tick: every window not completed from the last completed one through the current + 2, then the
   * top-up of the timers behind them ({@link topUp}).
   */
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
    // Timers whose next fire is not known yet get the first window not completed: every fire before it
    // exists (what the expansion of all enabled timers assumed). Lower than needed costs only a re-write.
    await this.resolveUnknown(plan.windows[0]?.start ?? plan.to + windowMs);
    // Every planned window's bucket counts before any expansion: a count is cheap next to an
    // expansion, and a window waiting behind another's expansion must still be counted before the
    // scheduler reaches its minutes (else they keep the default).
    for (const w of plan.windows) {
      if (this.stopping) break;
      await this.recordBuckets(w, () => this.checkStopping()).catch((e: Error) => {
        if (!(e instanceof StoppingError)) this.logger.warn(`window ${isoWindow(w)}: bucket counts not recorded ahead (its run records them): ${e.message}`);
      });
    }
    const outcomes: WindowOutcome[] = [];
    for (const w of plan.windows) {
      if (this.stopping) break;
      // Pacing is bounded from the tick's start, not each window's: the top-up below waits for them all.
      outcomes.push(await this.migrateWindow(w, now));
    }
    // Only once every window is completed: a window still being worked (here or by another replica)
    // reads the same timers, and a top-up beside it would write its fires twice over.
    if (!this.stopping && outcomes.every((o) => o.status === 'completed' || o.status === 'already-completed')) await this.topUp();
    return outcomes;
  }

  /**
   * Writes the rest of the prepared windows for the timers behind them: enable, edit and batch create
   * write only the near future (TIMER_PRECREATE_SECONDS) and leave the timer's next_fire_at there, also
   * in windows already completed. One indexed read finds none in the steady state. Under the lock
   * `migrate:topup`; returns what it wrote, or null when another replica holds it or it failed.
   */
  async topUp(): Promise<ExpandCounts | null> {
    const prepared = preparedWindows(this.clock.now(), this.config.windowMs);
    const window: Window = { start: prepared.from, end: prepared.until };
    const started = Date.now();
    try {
      // Not paced: its timers' fires are due from TIMER_PRECREATE_SECONDS on.
      const counts = await this.underLease(LOCK_RESOURCES.migrateTopUp, (checkpoint) => this.expand(window, checkpoint, undefined, null));
      if (counts && counts.timers > 0) {
        this.metrics.firesCreated.inc(counts.inserted);
        this.logger.log(`top-up to ${new Date(window.end).toISOString()}: ${counts.timers} timers, ${counts.fires} fires (${counts.inserted} new rows), ${Date.now() - started} ms`);
      }
      return counts;
    } catch (e) {
      if (!(e instanceof StoppingError)) this.logger.error(`top-up failed (retried next tick): ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
  }

  /**
   * Runs `fn` under the lock `resource`, its lease extended every third of it while `fn` works;
   * `checkpoint` throws once the lease is lost or the migrator stops. Null when the lock is held elsewhere.
   */
  private async underLease<T>(resource: string, fn: (checkpoint: () => void) => Promise<T>): Promise<T | null> {
    const lock = await this.locks.tryAcquire({ resource, ttlMs: this.config.lockLeaseMs });
    if (!lock) return null;
    let lost = false;
    // Extend the lease while working, so a slow page does not let another replica take the work.
    const heartbeat = setInterval(() => {
      void lock.extend(this.config.lockLeaseMs).then((ok) => {
        if (!ok) lost = true;
      });
    }, Math.max(1000, Math.floor(this.config.lockLeaseMs / 3)));
    heartbeat.unref();
    try {
      return await fn(() => {
        if (lost) throw new LockLostError(`lost the lock ${resource}`);
        this.checkStopping();
      });
    } finally {
      clearInterval(heartbeat);
      await lock.release();
    }
  }

  private checkStopping(): void {
    if (this.stopping) throw new StoppingError('stopping');
  }

  private async resolveUnknown(fromMs: number): Promise<void> {
    let resolved = 0;
    for (let n = RESOLVE_BATCH; n === RESOLVE_BATCH && !this.stopping; resolved += n) n = await this.timers.resolveUnknownNextFire(fromMs, RESOLVE_BATCH);
    if (resolved > 0) this.logger.log(`${resolved} timers without a known next fire read from ${new Date(fromMs).toISOString()}`);
  }

  /** Migrates one window under its lock, its pacing bounded from `paceFrom` (default: now); never throws. */
  async migrateWindow(window: Window, paceFrom = this.clock.now()): Promise<WindowOutcome> {
    const started = Date.now();
    try {
      const outcome = await this.underLease(LOCK_RESOURCES.migrateWindow(window.start), async (checkpoint): Promise<WindowOutcome> => {
        // Re-check under the lock: another replica may have completed it since the tick listed it.
        if (await this.windows.isCompleted(window.start)) return { window, status: 'already-completed' };
        await this.recordBuckets(window, checkpoint);
        const boundaries = this.ranges && this.config.rangeTimers > 0 ? await this.ranges.boundaries(this.config.rangeTimers, window.end) : [];
        const counts = boundaries.length > 0 ? await this.coordinate(window, boundaries, checkpoint) : await this.expand(window, checkpoint, undefined, paceFrom);
        // The lease may have lapsed during the last page; completing is still right (the work is done).
        await this.windows.markCompleted(window.start, window.end);
        const ms = Date.now() - started;
        this.metrics.windowsCompleted.inc();
        this.metrics.firesCreated.inc(counts.inserted);
        this.metrics.lastCompletedWindow.set(window.start / 1000);
        this.metrics.windowDuration.observe(ms / 1000);
        this.logger.log(`window ${isoWindow(window)} completed: ${counts.timers} timers, ${counts.fires} fires (${counts.inserted} new rows), ${ms} ms`);
        return { window, status: 'completed', ...counts, ms };
      });
      return outcome ?? { window, status: 'busy' };
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      if (!(e instanceof StoppingError)) {
        this.metrics.windowsFailed.inc();
        this.logger.error(`window ${isoWindow(window)} failed (retried next tick): ${e instanceof LockLostError ? error : e instanceof Error ? e.stack : error}`);
      }
      return { window, status: 'failed', error };
    }
  }

  /**
   * A window too large for one replica: publishes one range message per range not yet done, then
   * waits (holding the window lock) until every range is recorded done, by whichever replica took
   * it (this one included). Returns the summed counts. A range left undone for RANGE_WAIT_MS fails
   * the window; the next tick publishes the missing ranges again (their work is idempotent).
   */
  private async coordinate(window: Window, boundaries: string[], checkpoint: () => void): Promise<ExpandCounts> {
    const ranges = rangesOf(window, boundaries.slice(0, MAX_RANGES));
    const coordination = this.ranges!;
    let published = 0;
    for (const r of ranges) {
      if ((await coordination.done(r)) === null) {
        await coordination.publish(r);
        published++;
      }
    }
    this.logger.log(`window ${isoWindow(window)}: split into ${ranges.length} ranges of ${this.config.rangeTimers} timers; ${published} published`);
    const started = this.clock.now();
    for (;;) {
      checkpoint();
      const done = await Promise.all(ranges.map((r) => coordination.done(r)));
      if (done.every((c) => c !== null)) {
        return done.reduce<ExpandCounts>((a, c) => ({ timers: a.timers + c!.timers, fires: a.fires + c!.fires, inserted: a.inserted + c!.inserted }), {
          timers: 0,
          fires: 0,
          inserted: 0,
        });
      }
      if (this.clock.now() - started > RANGE_WAIT_MS) {
        throw new Error(`window ${isoWindow(window)}: ${done.filter((c) => c === null).length} of ${ranges.length} ranges not done after ${RANGE_WAIT_MS} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, RANGE_POLL_MS));
    }
  }

  /**
   * One range message (any replica): expands the range's timers for its window unless the window or
   * the range is already done, then records it done. Throws on failure (the message is redelivered).
   */
  async migrateRange(range: MigrateRangeMessage): Promise<RangeOutcome> {
    if (!this.ranges) throw new Error('range messages need a RangeCoordination');
    const window: Window = { start: range.windowStart, end: range.windowEnd };
    if ((await this.windows.isCompleted(window.start)) || (await this.ranges.done(range)) !== null) {
      this.metrics.rangesMigrated.inc({ outcome: 'skipped' });
      return 'skipped';
    }
    const started = Date.now();
    try {
      const counts = await this.expand(
        window,
        () => this.checkStopping(),
        { after: range.fromTimerId === '0' ? null : range.fromTimerId, upTo: range.toTimerId === '' ? undefined : range.toTimerId },
        // Not paced: a split window is spread over the replicas, and its lock holder waits for every range.
        null,
      );
      await this.ranges.markDone(range, counts);
      this.metrics.firesCreated.inc(counts.inserted);
      this.metrics.rangesMigrated.inc({ outcome: 'migrated' });
      this.logger.log(
        `window ${isoWindow(window)} range (${range.fromTimerId}, ${range.toTimerId || 'end'}]: ${counts.timers} timers, ${counts.fires} fires (${counts.inserted} new rows), ${Date.now() - started} ms`,
      );
      return 'migrated';
    } catch (e) {
      this.metrics.rangesMigrated.inc({ outcome: 'failed' });
      throw e;
    }
  }

  /**
   * Records each minute's bucket count from the fires the window's timers have in it, before any of
   * them is indexed, so that every role splits the minute the same way and a heavy minute is walked
   * as more slices (docs/scaling.md, "Buckets per minute"). One read of the window's due timers and
   * no write; skipped when every minute is recorded already (counted ahead by the tick, a re-run). A minute recorded before
   * (the api's near future, the scheduler) keeps its count: whichever count a minute has, its fires
   * are indexed in the buckets that count gives, the ones the trigger walks.
   */
  private async recordBuckets(window: Window, checkpoint: () => void): Promise<void> {
    const atMost = await this.bucketsForTriggers();
    // No count can change the default (TIMER_SLICE_BUCKETS_MAX = TIMER_SLICE_BUCKETS, or triggers with no
    // slot to spare for more): nothing to read.
    if (this.buckets.bucketsFor(Number.MAX_SAFE_INTEGER, atMost) === this.buckets.bucketsFor(0)) return;
    const fires = new Map<number, number>();
    for (let m = window.start; m < window.end; m += MINUTE_MS) fires.set(m, 0);
    const recorded = await Promise.all([...fires.keys()].map((m) => this.buckets.recordedBuckets(m)));
    if (recorded.every((b) => b !== null)) return;
    const now = this.clock.now();
    await this.forEachDuePage(window, checkpoint, undefined, async (page) => {
      for (const t of page) {
        try {
          for (const chunk of this.firesIn(window, t, now)) {
            for (const f of chunk) {
              const minute = minuteOf(f.runAt);
              const n = fires.get(minute);
              if (n !== undefined) fires.set(minute, n + 1);
            }
          }
        } catch {
          // A schedule that does not evaluate is logged by the expansion; it adds no fire here either.
        }
      }
    });
    const counts = await this.buckets.recordBuckets(fires, atMost);
    for (const n of counts.values()) this.metrics.minuteBuckets.observe(n);
  }

  /**
   * The most buckets the live triggers can walk ({@link bucketsForTriggers}): a slice beyond their slots
   * would wait for one until a minute ends. No fresh report (or Redis unreadable): the default count.
   * Undefined without a {@link TRIGGER_SLOTS} source.
   */
  private async bucketsForTriggers(): Promise<number | undefined> {
    if (!this.triggers) return undefined;
    const live = await this.triggers.live(this.clock.now()).catch(() => null);
    const atMost = bucketsForTriggers(live) ?? 0;
    this.metrics.triggerBuckets.set(atMost);
    return atMost;
  }

  /**
   * The timer's fires from where the window reads it (`firesFrom`) to the window's end, in
   * window-sized steps: a timer read from an earlier window (one not expanded yet) stays bounded.
   * Throws `ScheduleError` when its stored schedule does not evaluate.
   */
  private *firesIn(window: Window, t: TimerEntity, now: number): Generator<NewTask[]> {
    const { catchUpMs, windowMs } = this.config;
    const from = firesFrom(window, t.nextFireAt, t.updatedAt instanceof Date ? t.updatedAt.getTime() : NaN, now, catchUpMs);
    for (let s = from; s < window.end; s = Math.min(s + windowMs, window.end)) yield FireWriter.firesOf(t, s, Math.min(s + windowMs, window.end));
  }

  /**
   * Pages through the timers with a fire before the window's end (`next_fire_at`, of a range of ids
   * when given), keyset on (next_fire_at, id) as read. Returns how many timers it read.
   */
  private async forEachDuePage(window: Window, checkpoint: () => void, range: { after: string | null; upTo?: string } | undefined, fn: (page: TimerEntity[]) => Promise<void>): Promise<number> {
    const { pageSize } = this.config;
    let after: DueCursor | null = null;
    let timers = 0;
    for (;;) {
      checkpoint();
      const page: TimerEntity[] = await this.timers.duePage(window.end, after, pageSize, range ? { afterId: range.after, upToId: range.upTo } : undefined);
      if (page.length === 0) break;
      await fn(page);
      timers += page.length;
      const last = page[page.length - 1];
      after = { nextFireAt: Number(last.nextFireAt), id: last.id };
      if (page.length < pageSize) break;
    }
    return timers;
  }

  /**
   * Reads the timers with a fire before the window's end (`next_fire_at`, of a range of ids when given),
   * writes each page's fires (rows first, then the index), moves their `next_fire_at` to their first
   * fire at or after the window's end, then regenerates the fires of the page's timers that changed
   * meanwhile. A timer read is never read again for this window: its next_fire_at leaves the range.
   * Paced (`ExpansionPacer`) from `paceFrom` unless it is null: chunks shrink and pauses come between
   * them while the executors are late, never past the window's deadline.
   */
  private async expand(window: Window, checkpoint: () => void, range: { after: string | null; upTo?: string } | undefined, paceFrom: number | null): Promise<ExpandCounts> {
    const now = this.clock.now();
    let fires = 0;
    let inserted = 0;
    let read = 0;
    let rows: NewTask[] = [];
    const ids = range ? { afterId: range.after, upToId: range.upTo } : undefined;
    const pace = paceFrom !== null && this.pacer ? await this.pacer.begin(window, ids, paceFrom) : null;
    const chunkRows = () => pace?.chunkRows ?? FLUSH_ROWS;
    const flush = async () => {
      if (rows.length === 0) return;
      const batch = rows;
      rows = [];
      await pace?.beforeChunk(batch.length, fires - batch.length, checkpoint);
      const written = await this.writer.write(batch);
      inserted += written.inserted;
      // Fires already due (catch-up after downtime, a window migrated late): the walk may be past them.
      if (written.due.length > 0) await this.writer.publishDue(written.due);
      // A pause here holds back no timer's next_fire_at: it moves only after all of its page is written.
      await pace?.afterChunk({ timers: read, fires }, checkpoint);
    };
    const timers = await this.forEachDuePage(window, checkpoint, range, async (page) => {
      const advances: NextFireAdvance[] = [];
      for (const t of page) {
        try {
          const steps = [...this.firesIn(window, t, now)];
          for (const [i, timerFires] of steps.entries()) {
            fires += timerFires.length;
            for (const f of timerFires) rows.push(f);
            // The last step's rows are written below, once the timer counts as read (the pacing's estimate).
            if (rows.length >= chunkRows() && i < steps.length - 1) await flush();
          }
          read++;
          advances.push({ id: t.id, version: t.version, nextFireAt: FireWriter.nextFireAt(t, window.end) });
          if (rows.length >= chunkRows()) await flush();
        } catch (e) {
          // A stored schedule that no longer evaluates must not block every other timer of the window.
          this.logger.error(`timer ${t.id}: cannot compute its fires in ${isoWindow(window)}: ${(e as Error).message}`);
        }
      }
      await flush();
      // Only now that its fires are written: a crash before this reads the timer again.
      await this.timers.advanceNextFire(advances);
      // A timer edited since the page was read got fires of its old definition: regenerated here.
      await this.changed.recheck(page, Math.max(this.clock.now(), window.start), window.end);
    });
    if (pace && pace.paused > 0) this.logger.log(`window ${isoWindow(window)}: ${Math.round(pace.paused)} ms paused (the executors' lag, the quiet part of each second)`);
    return { timers, fires, inserted };
  }
}

/** (0, b1], (b1, b2], ..., (bn, end): from exclusive ('0' = the first id), to inclusive ('' = no bound). */
export function rangesOf(window: Window, boundaries: string[]): MigrateRangeMessage[] {
  const cuts = ['0', ...boundaries];
  return cuts.map((from, i) => ({ windowStart: window.start, windowEnd: window.end, fromTimerId: from, toTimerId: boundaries[i] ?? '' }));
}

