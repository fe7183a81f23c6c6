import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { MESSAGE_PROPERTIES, TaskMessage } from '@timer/contracts';
import { FireState, TaskStatus } from '@timer/dal';
import { ExecutorConfig } from '../config/executor.env';
import { CallStarts } from './call-starts.service';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { LIVENESS_TTL_MS } from './executor-liveness.service';
import { FireClaimer } from './fire-claimer.service';
import { fireDelayOf } from './jitter';
import { FirePublisher } from '../fire/fire-publisher';
import { InstantDiagnostics } from '../shared/instant-diagnostics';
import { ClaimedAttempt, FireResult } from '../shared/fire.types';
import { PauseWatch } from '../shared/pause-watch.service';
import { isSettled } from '../shared/settled-fires.service';
import { TimerCache } from '../shared/timer-cache.service';

/** A held fire is rechecked this long after its holder's lease ends. */
export const RECHECK_MARGIN_MS = 1_000;
/** Pulsar delivers delayed messages on a tick (1 s by default): an early message comes back this much before run_at. */
export const EARLY_REPUBLISH_LEAD_MS = 1_000;

/** Whether a message goes on to delivery: with its claimed attempt, or done here with what was done. */
export type Admission = { admitted: true; attempt: ClaimedAttempt } | { admitted: false; result: FireResult };

/**
 * The first half of a task message (docs/architecture.md, "executor"): a replay reopened, a message far
 * ahead of run_at handed back to the broker, a duplicate of a settled fire dropped, then the claim
 * (the duplicate fence); a fire held by a live claim is rechecked after its lease.
 */
@Injectable()
export class FireAdmission {
  private readonly logger = new Logger(FireAdmission.name);

  constructor(
    private readonly claimer: FireClaimer,
    private readonly publisher: FirePublisher,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly pauses: PauseWatch,
    private readonly cache: TimerCache,
    private readonly calls: CallStarts,
    @Optional() private readonly diag?: InstantDiagnostics,
  ) {}

  async admit(message: TaskMessage, properties: Record<string, string>): Promise<Admission> {
    let msg = message;
    const recheck = properties[MESSAGE_PROPERTIES.recheck] === '1';
    // A replayed dead letter or a run now is delivered without the misfire check (late is what was asked for).
    const replayed = properties[MESSAGE_PROPERTIES.replayedFrom] !== undefined;
    const onDemand = replayed || properties[MESSAGE_PROPERTIES.runNow] === '1';
    if (replayed) msg = await this.claimer.reopenForReplay(msg);

    // Far ahead (of run_at plus the fire's jitter): hand it back to the broker for later instead of
    // holding a worker (and a claim) for long.
    const due = this.dueAt(msg, onDemand) ?? (await this.dueAtLoaded(msg));
    const ahead = due - this.clock.now();
    if (ahead > this.config.maxEarlyWaitMs) {
      await this.publisher.defer(msg, due - Math.min(EARLY_REPUBLISH_LEAD_MS, this.config.maxEarlyWaitMs), recheck);
      this.metrics.deferred.inc({ reason: 'early' });
      return done('deferred-early');
    }

    // A first attempt of a paused app's fire, unless asked for (run now, replay, backfill; a recheck is of a fire already claimed).
    if (!onDemand && !msg.backfill && !recheck && msg.attempt === 1 && this.pauses.any) {
      const paused = await this.paused(msg);
      if (paused) return done(paused);
    }

    const claim = await this.claimer.claim(msg);
    if (claim.kind === 'timer-not-found') return done(this.missedWithoutRow(msg));
    if (claim.kind === 'refused') {
      // Held by an executor that is gone: take it over now rather than after its lease.
      const taken = await this.claimer.takeOverFromDead(msg, claim.state);
      if (taken !== null) {
        const how = taken.mayHaveCalled ? 'its call may have reached the receiver' : 'its call had not started';
        this.logger.warn(`fire ${msg.fireId} attempt ${msg.attempt}: its holder ${claim.state?.claimedBy} is gone; taken over (${how})`);
        return { admitted: true, attempt: { msg, token: taken.token, onDemand, redelivery: taken.mayHaveCalled ? 'holder_died' : null } };
      }
      return done(await this.notClaimed(msg, claim.state, recheck));
    }
    // A recheck that claims took the fire over from a holder whose lease ran out (whether it called is
    // not known): flagged, and carried on to this claim's own takers.
    if (recheck) await this.calls.carry(claim.token);
    this.diag?.claimed(msg.runAt);
    return { admitted: true, attempt: { msg, token: claim.token, onDemand, redelivery: recheck ? 'lease_expired' : null } };
  }

  /**
   * When a first attempt is due: run_at plus its timer's jitter or spread offset (docs/behaviour.md, "Fire policies"). Only
   * a timer with `jitterMs` can be due later than run_at; its definition is usually cached (prefetched).
   */
  private dueAt(msg: TaskMessage, onDemand: boolean): number | undefined {
    if (onDemand || msg.attempt !== 1) return msg.runAt;
    const def = this.cache.peek(msg.timerId);
    return def === undefined ? undefined : msg.runAt + fireDelayOf(msg.fireId, def?.timer);
  }

  /** {@link dueAt} of a first attempt whose definition is not cached. */
  private async dueAtLoaded(msg: TaskMessage): Promise<number> {
    const def = await this.cache.get(msg.timerId);
    return msg.runAt + fireDelayOf(msg.fireId, def?.timer);
  }

  /**
   * A fire in its app's pause is acked without a callback and without a write: its row stays pending
   * until the reconciler or the resume records it missed (`paused`), in bulk (docs/behaviour.md, "Pause").
   * One further ahead than a resume could still reach goes back to the broker until just before its time.
   */
  private async paused(msg: TaskMessage): Promise<FireResult | null> {
    const def = await this.cache.get(msg.timerId);
    if (!def) return null;
    const verdict = this.pauses.verdict(def.timer.app, msg.runAt);
    if (verdict === 'deliver') return null;
    if (verdict === 'later') {
      await this.publisher.defer(msg, msg.runAt - EARLY_REPUBLISH_LEAD_MS, false);
      this.metrics.deferred.inc({ reason: 'paused' });
      return 'deferred-early';
    }
    this.pauses.skipped.inc();
    this.logger.debug(`fire ${msg.fireId}: app ${def.timer.app} is paused, not delivered`);
    return 'paused';
  }

  /** The claim was refused: settled or stale -> duplicate; held by a live claim -> recheck after its lease. */
  private async notClaimed(msg: TaskMessage, s: FireState | null, recheck: boolean): Promise<FireResult> {
    if (s === null) return this.duplicate(msg, 'stale', recheck);
    if (isSettled(s)) {
      return this.duplicate(msg, 'settled', recheck);
    }
    if (s.status === TaskStatus.Running && s.attempt <= msg.attempt) {
      // Another executor holds the fire (or waits for its retry). Acking this message would lose the
      // fire if that executor dies mid-callback before its own message is redelivered; so look again:
      // within the liveness TTL while a process holds it (a dead one is then taken over), once the
      // lease is over for a pending retry (its own message is due then).
      const now = this.clock.now();
      const leaseEnd = Math.max(s.claimedUntil ?? now, now);
      const at = (s.claimedBy !== null ? Math.min(leaseEnd, now + LIVENESS_TTL_MS) : leaseEnd) + RECHECK_MARGIN_MS;
      await this.publisher.defer(msg, at, true);
      this.metrics.deferred.inc({ reason: 'held' });
      if (!recheck) this.metrics.duplicates.inc({ reason: 'in_flight' });
      this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt} is held by ${s.claimedBy ?? 'a pending retry'}; rechecking at ${at}`);
      return 'deferred-held';
    }
    return this.duplicate(msg, 'stale', recheck);
  }

  private duplicate(msg: TaskMessage, reason: 'settled' | 'stale', recheck: boolean): FireResult {
    if (!recheck) this.metrics.duplicates.inc({ reason });
    this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt}: ${reason}, not delivered again`);
    return 'duplicate';
  }

  /** The timer is gone altogether: there is no app to file a row under. Counted and logged, never silent. */
  private missedWithoutRow(msg: TaskMessage): FireResult {
    this.metrics.missed.inc({ reason: 'timer_not_found' });
    this.logger.warn(`fire ${msg.fireId} missed: timer not found (and no task row to record it in)`);
    return 'missed';
  }
}

function done(result: FireResult): Admission {
  return { admitted: false, result };
}
