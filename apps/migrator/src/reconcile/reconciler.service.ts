import { Inject, Injectable, Logger } from '@nestjs/common';
import { fireId, TaskMessage, windowOf } from '@timer/contracts';
import { AppRepository, LedgerRepository, OverdueFire, TaskStatus } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { LOCK_RESOURCES, PausedApps, RedisLock, RescueMarks } from '@timer/redis';
import { TaskPublisher, taskMessage } from '@timer/fire';
import { MigratorConfig } from '../config/migrator.env';
import { ExecutorBacklog } from './executor-backlog';
import { ReconcilerMetrics, RescueReason } from './reconciler.metrics';

export type Ledger = Pick<LedgerRepository, 'overdue' | 'countPendingBefore' | 'countOpenBefore' | 'missPaused'>;
export type Pauses = Pick<AppRepository, 'pauseWindows'>;
export type PauseMirror = Pick<PausedApps, 'sync'>;
export type Marks = Pick<RescueMarks, 'mark' | 'waitingInBroker'>;
export type Locks = Pick<RedisLock, 'tryAcquire'>;
export type Publisher = Pick<TaskPublisher, 'publish' | 'publishBatch'>;
export type Backlog = Pick<ExecutorBacklog, 'lagMs'>;

/** A fire is published again at most this often while it stays overdue. */
export const RESCUE_EVERY_MS = 60_000;
/**
 * The grace after a broker outage (the executors' backlog could not be read), for the passes within
 * {@link OUTAGE_RECOVERY_MS} of its end: a fire still pending this long past its time once the broker is
 * back and the executors' backlog is fresh is stranded by the outage (a publish lost as the broker
 * went down), not queued, so it does not wait out TIMER_RECONCILER_GRACE_MS, which is sized for load.
 */
export const OUTAGE_GRACE_MS = 5_000;
/** How long after the broker is back the passes use {@link OUTAGE_GRACE_MS}. */
export const OUTAGE_RECOVERY_MS = 60_000;
/**
 * Pending fires are published again only while the executors' oldest unacknowledged task message is
 * younger than this. When they are further behind, a pending fire is most likely waiting in that
 * backlog: at 5,000 fires/s the reconciler re-sent the stack's first fires again and again while the
 * executor worked through them, adding work exactly when it was behind. Held back, such a fire is
 * rescued once the backlog is fresh again (nothing is dropped: it waits like the backlog does).
 */
export const RESCUE_MAX_BACKLOG_LAG_MS = 10_000;
/**
 * Beyond this age the oldest message is taken for one a stuck consumer holds (connected, never
 * acknowledging), not for a backlog being worked through: pending fires are rescued as usual.
 */
export const RESCUE_HOLD_MAX_MS = 600_000;
/**
 * Rescued fires per task message (as FireWriter.publishDue sends fires already due). A pass rescues up
 * to TIMER_RECONCILER_BATCH fires, and a message each cost the broker and the executors per message:
 * in the fairness bench a pass re-sent 1,000 handed-back fires of the slow app one message each, and the
 * other app's fires due in that second were late.
 */
export const RESCUE_MESSAGE_FIRES = 100;
/** The gauges count up to this many rows (a count must stay cheap when something is badly wrong). */
export const COUNT_CAP = 100_000;
/**
 * A pause that ended this long ago is forgotten: its interval's fires were settled by the resume (or
 * by the passes since); one left pending after that (every settle failed for an hour) is re-published
 * like any overdue fire, so none stays pending forever.
 */
export const PAUSE_HORIZON_MS = 3_600_000;
/** Fires of a paused app are recorded missed once they are this far in the past (a run now of it is claimed first). */
export const PAUSE_SETTLE_LAG_MS = 5_000;
/** At most this many fires of one paused app recorded missed per pass (one statement). */
export const PAUSE_SETTLE_BATCH = 10_000;

/** What one pass did. */
export type PassResult = { ran: false } | { ran: true; overdue: number; rescued: Record<RescueReason, number>; failed: number; pausedMissed: number };

/**
 * Reconciles the pipeline with MySQL, the ledger (invariant 8): every pass (one replica at a time,
 * under a Redis lock) finds fires whose run_at passed more than TIMER_RECONCILER_GRACE_MS ago and that
 * nothing is working on (pending, or running with an expired claim or a pending retry whose time has
 * passed) and publishes their task messages again, oldest first, at most TIMER_RECONCILER_BATCH a
 * pass. The executor then delivers them or records them missed under their misfire policy. This
 * covers what the slice walk cannot see: fires inserted into minutes already walked, minutes past the
 * scheduler's lookback, lost Redis state, a lost retry message.
 *
 * Paused apps (docs/behaviour.md, "Pause"): each pass first makes the Redis mirror of the pauses match
 * MySQL, then records the pending fires of each pause's interval missed (`paused`), up to
 * {@link PAUSE_SETTLE_LAG_MS} ago, one bounded statement per pause; those fires are never re-published.
 */
@Injectable()
export class ReconcilerService {
  private readonly logger = new Logger(ReconcilerService.name);
  /** The broker did not answer the last backlog read. */
  private brokerAway = false;
  /** When a backlog read last succeeded after one failed: the end of a broker outage. */
  private brokerBackAt = Number.NEGATIVE_INFINITY;

  constructor(
    @Inject(LedgerRepository) private readonly ledger: Ledger,
    @Inject(TaskPublisher) private readonly publisher: Publisher,
    @Inject(RescueMarks) private readonly marks: Marks,
    @Inject(RedisLock) private readonly locks: Locks,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly config: MigratorConfig,
    private readonly metrics: ReconcilerMetrics,
    @Inject(AppRepository) private readonly pauses: Pauses,
    @Inject(PausedApps) private readonly mirror: PauseMirror,
    @Inject(ExecutorBacklog) private readonly backlog: Backlog,
  ) {}

  async pass(): Promise<PassResult> {
    const lock = await this.locks.tryAcquire({ resource: LOCK_RESOURCES.reconciler, ttlMs: Math.max(10_000, 3 * this.config.reconcileIntervalMs) });
    if (!lock) return { ran: false };
    try {
      const now = this.clock.now();
      const pauseEndedSince = now - PAUSE_HORIZON_MS;
      const pausedMissed = await this.settlePauses(now, pauseEndedSince);
      const holdPending = await this.backlogTooOld(now);
      const grace = now - this.brokerBackAt < OUTAGE_RECOVERY_MS ? Math.min(OUTAGE_GRACE_MS, this.config.reconcileGraceMs) : this.config.reconcileGraceMs;
      const dueBefore = now - grace;
      const found = await this.ledger.overdue(dueBefore, now, this.config.reconcileBatch, pauseEndedSince);
      const rows = holdPending ? found.filter((r) => r.status !== TaskStatus.Pending) : await this.withoutHandedBack(found);
      const fresh = await this.marks.mark(
        rows.map((r) => fireId(r.timerId, r.runAt)),
        RESCUE_EVERY_MS,
      );
      const rescued: Record<RescueReason, number> = { pending: 0, stale_claim: 0, lost_retry: 0 };
      let failed = 0;
      const due = rows.filter((_, i) => fresh[i]);
      const messages: OverdueFire[][] = [];
      for (let i = 0; i < due.length; i += RESCUE_MESSAGE_FIRES) messages.push(due.slice(i, i + RESCUE_MESSAGE_FIRES));
      const results = await Promise.allSettled(
        messages.map((fires) => (fires.length === 1 ? this.publisher.publish(rescueMessage(fires[0])) : this.publisher.publishBatch(fires.map(rescueMessage)))),
      );
      results.forEach((res, i) => {
        if (res.status === 'rejected') {
          failed += messages[i].length;
          return;
        }
        for (const r of messages[i]) {
          const reason = reasonOf(r);
          rescued[reason]++;
          this.metrics.rescued.inc({ reason });
        }
      });
      if (due.length > 0) {
        this.logger.warn(
          `rescued ${due.length - failed} overdue fire(s) (pending ${rescued.pending}, stale claim ${rescued.stale_claim}, lost retry ${rescued.lost_retry})` +
            (failed > 0 ? `; ${failed} publish(es) failed, retried next pass` : '') +
            `; oldest ${new Date(due[0].runAt).toISOString()}`,
        );
      }
      const overdue = await this.ledger.countPendingBefore(dueBefore, COUNT_CAP);
      this.metrics.overdue.set(overdue);
      this.metrics.unsettledFinishedWindows.set(await this.ledger.countOpenBefore(windowOf(now, this.config.windowMs).start, COUNT_CAP));
      return { ran: true, overdue, rescued, failed, pausedMissed };
    } finally {
      await lock.release();
    }
  }

  /**
   * True when pending fires should wait for the executors' backlog ({@link RESCUE_MAX_BACKLOG_LAG_MS});
   * false when unknown. Notes a broker outage's end (a read that succeeds after one that failed).
   */
  private async backlogTooOld(now: number): Promise<boolean> {
    try {
      const lag = await this.backlog.lagMs();
      if (this.brokerAway) {
        this.brokerAway = false;
        this.brokerBackAt = now;
        this.logger.log(`the broker is back: for ${OUTAGE_RECOVERY_MS / 1_000} s fires ${OUTAGE_GRACE_MS / 1_000} s past their time are rescued once the executors' backlog is fresh`);
      }
      this.metrics.executorBacklogLag.set(lag / 1_000);
      if (lag <= RESCUE_MAX_BACKLOG_LAG_MS) return false;
      if (lag > RESCUE_HOLD_MAX_MS) {
        this.logger.warn(`the executors' oldest task message waits for ${Math.round(lag / 1_000)} s: a consumer may be stuck; pending overdue fires are rescued`);
        return false;
      }
      this.logger.log(`the executors' oldest task message waits for ${Math.round(lag / 1_000)} s: pending overdue fires are held back this pass (most likely in that backlog)`);
      return true;
    } catch (e) {
      this.brokerAway = true;
      // Without the broker's answer the reconciler does what it did before it asked.
      this.logger.warn(`reading the executors' backlog failed (pending fires rescued as usual): ${(e as Error).message}`);
      return false;
    }
  }

  /**
   * The rows less the fires that a fair-delivery hand-back keeps on the retries topic (their executor's
   * mark, `RescueMarks.handedBack`): pending ones, and retries waiting without a holder (a refused call's
   * retry that came back over its app's share). They are not in the lanes' backlog that
   * {@link backlogTooOld} reads, and re-sending them only made the executor hand them back again (the
   * fairness bench's slow app: 1,000 of them a pass, ~34 s after it started). A lapsed mark (the
   * hand-back's return plus a margin, at most ~10 min ahead) lets a fire whose message was lost be
   * rescued; a stale claim (its holder died) is never held; without Redis's answer every row is rescued.
   */
  private async withoutHandedBack(rows: OverdueFire[]): Promise<OverdueFire[]> {
    const unheld = rows.filter((r) => r.claimedBy === null);
    if (unheld.length === 0) return rows;
    try {
      const waiting = await this.marks.waitingInBroker(unheld.map((r) => fireId(r.timerId, r.runAt)));
      const held = new Set(unheld.filter((_, i) => waiting[i]));
      if (held.size > 0) this.logger.log(`${held.size} overdue fire(s) wait on the retries topic (handed back by fair delivery): not rescued this pass`);
      return held.size === 0 ? rows : rows.filter((r) => !held.has(r));
    } catch (e) {
      this.logger.warn(`reading the hand-back marks failed (overdue fires rescued as usual): ${(e as Error).message}`);
      return rows;
    }
  }

  /** Mirrors the pauses into Redis and records their intervals' pending fires missed; never throws. */
  private async settlePauses(now: number, endedSince: number): Promise<number> {
    let missed = 0;
    try {
      const pauses = await this.pauses.pauseWindows(endedSince);
      this.metrics.pausedApps.set(pauses.filter((p) => p.resumedAt === null).length);
      await this.mirror.sync(pauses, now).catch((e: Error) => this.logger.warn(`mirroring the paused apps into Redis failed (retried next pass): ${e.message}`));
      for (const p of pauses) {
        const n = await this.ledger.missPaused(p.app, p.pausedAt, Math.min(p.resumedAt ?? Number.MAX_SAFE_INTEGER, now - PAUSE_SETTLE_LAG_MS), PAUSE_SETTLE_BATCH);
        if (n > 0) this.logger.log(`app ${p.app}: ${n} fire(s) of its pause recorded missed`);
        missed += n;
      }
    } catch (e) {
      this.logger.warn(`recording paused apps' fires missed failed after ${missed} (retried next pass): ${(e as Error).message}`);
    }
    this.metrics.pausedMissed.inc(missed);
    return missed;
  }
}

function reasonOf(r: OverdueFire): RescueReason {
  if (r.status === TaskStatus.Pending) return 'pending';
  return r.claimedBy === null ? 'lost_retry' : 'stale_claim';
}

/**
 * The message that claims the fire as the claim rules expect it: the next attempt of a pending fire
 * or of one waiting for its retry, the same attempt of one whose holder stopped mid-delivery.
 */
export function rescueMessage(r: OverdueFire): TaskMessage {
  const attempt = r.status === TaskStatus.Running && r.claimedBy !== null ? Math.max(1, r.attempt) : r.attempt + 1;
  return taskMessage(r, { attempt, backfill: r.backfill });
}
