import { Inject, Injectable, Logger } from '@nestjs/common';
import { fireId, FireRef } from '@timer/contracts';
import { SUPERSEDED_PREFIX, TaskRepository, TaskStatus, TimerEntity, TimerRepository, TimerStatus } from '@timer/dal';
import { FireClaims, FireFence, SliceIndex } from '@timer/redis';
import { DataSource, EntityManager } from 'typeorm';
import { FireWriter } from './fire-writer';

export type StoredFires = Pick<TaskRepository, 'firesForUpdate' | 'supersede' | 'reopenSuperseded' | 'exclude' | 'deletePendingAfter' | 'deleteOpenFrom'>;
export type RegeneratedFireWriter = Pick<FireWriter, 'write' | 'afterCommit'>;
export type FireIndexRemover = Pick<SliceIndex, 'remove' | 'removeTimer'>;
export type TimerVersions = Pick<TimerRepository, 'versionsOf' | 'findLiveForUpdate' | 'setNextFireAt'>;
export type Transactions = Pick<DataSource, 'transaction'>;
export type SettledFences = Pick<FireClaims, 'fence'>;

/** Which stored fires a regeneration replaces, and how far it creates the new ones. */
export interface RegenerateRange {
  /** Fires before this are left as they are (their messages may be on their way). */
  fromMs: number;
  /** Fires at or after this are left as they are; default: no bound. */
  toMs?: number;
  /** The new definition's fires are created up to here, and up to the last stored fire it replaced. */
  createUntilMs: number;
  /**
   * The edit's cut (with `toMs`): the open fires at or after `toMs` are deleted, their index entries
   * removed up to `indexUntilMs`, and the timer's next fire set from `toMs`, so the migrator writes
   * them from the new definition. An edit then costs the near future, not the whole of the windows.
   */
  dropAfter?: { indexUntilMs: number };
}

/** What {@link FireRegenerator.regenerate} did; hand it to {@link FireRegenerator.afterCommit}. */
export interface Regeneration {
  /** Pending fires that are not fires of the new definition, now recorded missed (`superseded by version N`). */
  superseded: FireRef[];
  /** Fires of the new definition written (new rows, and superseded rows made pending again). */
  written: number;
  /** Of those, the ones due within NEAR_NOW_MS: published by afterCommit. */
  due: FireRef[];
  /** Of those, the ones due later: indexed by afterCommit. */
  unindexed: FireRef[];
  /** Pending fires deleted (a timer disabled while the migrator wrote them): afterCommit drops them from the index. */
  removed?: FireRef[];
  /** The superseded and calendar-excluded fires, fenced by afterCommit against a first claim in Redis. */
  fences?: FireFence[];
}

/** Most fires one regeneration computes (a 1-s cron over four one-day windows is 345,600). */
export const MAX_REGENERATED = 400_000;

/**
 * Makes a timer's stored fires those of its current definition, after an edit (the api) or when the
 * migrator finds that a timer changed while it expanded the old definition. Under the timer's row
 * lock, in the caller's transaction: the stored fires in the range are locked, the pending ones the
 * definition no longer has are recorded missed as superseded (not deleted: a task message already on
 * its way then finds a settled row, which the executor neither delivers nor re-creates), superseded
 * ones it has again become pending, and the missing ones are written through {@link FireWriter}.
 * Fires already claimed (running) or settled are left alone: a claimed fire finishes as it was claimed.
 */
@Injectable()
export class FireRegenerator {
  private readonly logger = new Logger(FireRegenerator.name);

  constructor(
    @Inject(TaskRepository) private readonly tasks: StoredFires,
    @Inject(FireWriter) private readonly writer: RegeneratedFireWriter,
    @Inject(SliceIndex) private readonly index: FireIndexRemover,
    @Inject(TimerRepository) private readonly timers: TimerVersions,
    @Inject(DataSource) private readonly dataSource: Transactions,
    @Inject(FireClaims) private readonly claims: SettledFences,
  ) {}

  /**
   * Regenerates the fires of `timer` (its definition and version as committed by this transaction) in
   * `range`. The caller holds the timer's row lock in `manager`'s transaction. Throws `ScheduleError`
   * when the definition does not evaluate.
   */
  async regenerate(timer: TimerEntity, range: RegenerateRange, manager: EntityManager): Promise<Regeneration> {
    const stored = await this.tasks.firesForUpdate(timer.id, range.fromMs, range.toMs, manager);
    const lastStored = stored.length > 0 ? stored[stored.length - 1].runAt + 1 : range.fromMs;
    const until = Math.min(range.toMs ?? Number.POSITIVE_INFINITY, Math.max(range.createUntilMs, lastStored));
    const fires = until > range.fromMs ? FireWriter.firesOf(timer, range.fromMs, until, MAX_REGENERATED) : [];
    const isFire = new Set(fires.map((f) => f.runAt));
    const byRunAt = new Map(stored.map((s) => [s.runAt, s]));

    const stale = stored.filter((s) => s.status === TaskStatus.Pending && !isFire.has(s.runAt)).map((s) => s.runAt);
    await this.tasks.supersede(timer.id, stale, `${SUPERSEDED_PREFIX}${timer.version}`, manager);
    // A fire an earlier edit superseded (or a calendar excluded) and this definition delivers: pending
    // again, whatever the status (enable inserts with INSERT IGNORE, which would leave it missed).
    await this.tasks.reopenSuperseded(timer.id, fires.filter((f) => f.excluded === undefined && byRunAt.get(f.runAt)?.superseded).map((f) => f.runAt), manager);
    // A stored fire a calendar now excludes: missed with the calendar's name (docs/calendars.md).
    const excluded = new Map<string, number[]>();
    for (const f of fires) {
      const s = f.excluded === undefined ? undefined : byRunAt.get(f.runAt);
      if (s && s.excluded !== f.excluded && (s.status === TaskStatus.Pending || s.superseded)) excluded.set(f.excluded as string, [...(excluded.get(f.excluded as string) ?? []), f.runAt]);
    }
    for (const [reason, runAts] of excluded) await this.tasks.exclude(timer.id, runAts, reason, manager);
    const settled = [...stale, ...[...excluded.values()].flat()];
    const fences = settled.map((runAt) => ({ fireId: fireId(timer.id, runAt), latestDue: runAt + Math.max(0, timer.jitterMs ?? 0) }));

    const live = timer.status === TimerStatus.Enabled && timer.deletedAt === null;
    const toWrite = live ? fires.filter((f) => (f.excluded === undefined ? (byRunAt.get(f.runAt)?.superseded ?? true) : !byRunAt.has(f.runAt))) : [];
    const { due, unindexed } = await this.writer.write(toWrite, manager);
    if (range.dropAfter && range.toMs !== undefined) await this.dropFrom(timer.id, range.toMs, range.dropAfter.indexUntilMs, manager);
    // Every fire of the definition before `until` exists now (the migrator reads the timer again from
    // its next one); a disabled timer's is set by its enable.
    if (live) await this.timers.setNextFireAt(timer.id, FireWriter.nextFireAt(timer, until), manager);
    return { superseded: stale.map((runAt) => ({ timerId: timer.id, runAt })), written: toWrite.length, due, unindexed, fences };
  }

  /**
   * Deletes the timer's open fires (pending, or superseded by an earlier edit) at or after `fromMs`
   * and their index entries, before the commit: a Redis failure rolls the edit back, as it does a
   * disable, since an index entry left without its row would be re-created by the executor's claim.
   */
  private async dropFrom(timerId: string, fromMs: number, indexUntilMs: number, manager: EntityManager): Promise<void> {
    await this.tasks.deleteOpenFrom(timerId, fromMs, manager);
    await this.index.removeTimer(timerId, fromMs, indexUntilMs);
  }

  /**
   * After the commit: fences the fires settled without an attempt against a first claim in Redis (their
   * task messages may be on their way, and that claim does not read the row), publishes the fires due
   * within seconds and removes the superseded ones from the slice index. A failure is only logged: the
   * executor's MySQL claim and its outcome's fence still find the row settled. Never throws.
   */
  async afterCommit(r: Regeneration): Promise<void> {
    if (r.fences && r.fences.length > 0) {
      await this.claims.fence(r.fences).catch((e: Error) => {
        this.logger.warn(`${r.fences?.length} superseded or excluded fire(s) not fenced in Redis; a message of one already on its way may still deliver it: ${e.message}`);
      });
    }
    const gone = [...r.superseded, ...(r.removed ?? [])];
    if (gone.length > 0) {
      await this.index.remove(gone).catch((e: Error) => {
        this.logger.warn(`${gone.length} superseded or removed fire(s) stay in the slice index until they expire (the executor records them missed): ${e.message}`);
      });
    }
    await this.writer.afterCommit(r);
  }

  /**
   * The migrator's fence. It reads a page of timers, then writes their fires; a timer changed in
   * between (an edit committed after the read) would get fires of its old definition. So after the
   * write, the versions are read again, and every timer whose version moved has its fires in
   * [fromMs, toMs) regenerated under its row lock. An edit that commits after this re-read cannot have
   * missed the fires just written: its locked read of the range waits for them or sees them.
   * Returns how many timers were regenerated.
   */
  async recheck(page: TimerEntity[], fromMs: number, toMs: number): Promise<number> {
    if (page.length === 0 || fromMs >= toMs) return 0;
    const versions = await this.timers.versionsOf(page.map((t) => t.id));
    const changed = page.filter((t) => versions.get(t.id) !== t.version);
    for (const t of changed) {
      const r = await this.dataSource.transaction(async (m) => {
        const current = await this.timers.findLiveForUpdate(t.app, t.id, m);
        if (!current) return null;
        if (current.status !== TimerStatus.Enabled) return this.dropPending(current, fromMs, toMs, m);
        return this.regenerate(current, { fromMs, toMs, createUntilMs: toMs }, m);
      });
      if (r) await this.afterCommit(r);
    }
    return changed.length;
  }

  /**
   * A timer disabled after the page was read: the disable deleted its fires ahead, then the fires just
   * written for it landed (the insert waited for its gap locks). They are deleted again, so a disabled
   * timer costs nothing (docs/behaviour.md, "Disable").
   */
  private async dropPending(timer: TimerEntity, fromMs: number, toMs: number, manager: EntityManager): Promise<Regeneration> {
    const stored = await this.tasks.firesForUpdate(timer.id, fromMs, toMs, manager);
    const removed = stored.filter((s) => s.status === TaskStatus.Pending).map((s) => ({ timerId: timer.id, runAt: s.runAt }));
    if (removed.length > 0) await this.tasks.deletePendingAfter(timer.id, fromMs - 1, manager, toMs);
    return { superseded: [], written: 0, due: [], unindexed: [], removed };
  }
}
