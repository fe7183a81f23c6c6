import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { CallbackResult } from '@timer/callback';
import { MESSAGE_PROPERTIES, MISSED_REASONS_NOTIFIED, TaskMessage } from '@timer/contracts';
import { FireOutcome, TaskStatus, TimerEntity } from '@timer/dal';
import { ExecutorConfig } from '../config/executor.env';
import { CallResult } from '../call/call-result';
import { retryDelayMs } from '../shared/backoff';
import { ExecutorMetrics, MissedReason } from '../shared/executor.metrics';
import { quietAt } from '../shared/instant-waits';
import { ClaimedAttempt, FireResult } from '../shared/fire.types';
import { FirstClaims } from '../admit/first-claims.service';
import { OutcomeRecorder } from './outcome-recorder.service';
import { unsentDeadline } from './unsent-deadline';

/** What every outcome of one attempt writes, before its status and claim. */
type AttemptBase = Omit<FireOutcome, 'status' | 'claimedBy' | 'claimedUntil'>;

/**
 * The end of one attempt, decided: the row to write (fenced by the claim) and what goes to the broker
 * with it. The orchestrator sends and records in the order each kind needs (docs/architecture.md,
 * "executor": write orders).
 */
export type Outcome =
  | { kind: 'succeeded'; msg: TaskMessage; row: FireOutcome }
  /** The next attempt at `at` (`used`: false when the origin refused the call: the same attempt again). */
  | { kind: 'retry'; msg: TaskMessage; row: FireOutcome; next: TaskMessage; at: number; used: boolean }
  | { kind: 'dead-letter'; msg: TaskMessage; row: FireOutcome; properties: Record<string, string> }
  /** Not called; `notify`: a reason its owner did not ask for (`MISSED_REASONS_NOTIFIED`), published for the failure notifier. */
  | { kind: 'missed'; msg: TaskMessage; row: FireOutcome; reason: MissedReason; text: string; notify: boolean }
  /** The claim was taken over before the call went out (this process was taken for dead): nothing sent, nothing written. */
  | { kind: 'taken-over'; msg: TaskMessage };

/** What a first attempt claimed in Redis needs should its row refuse the outcome: the app to file a gone row under, whether the call went out. */
interface FirstClaimed {
  app: string | null;
  sent: boolean;
}

/**
 * The settle stage: decides a call's {@link Outcome} (succeeded; failed with attempts left: retry, not
 * before the origin's Retry-After or open circuit; failed for good: dead letter) and records it
 * (batched, fenced by the claim). A record whose claim had passed on ends 'fenced'.
 */
@Injectable()
export class AttemptOutcomes {
  private readonly logger = new Logger(AttemptOutcomes.name);

  constructor(
    private readonly recorder: OutcomeRecorder,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly first?: FirstClaims,
  ) {}

  /** Rows of first attempts claimed in Redis, with what their refusal needs. */
  private readonly firstClaimed = new WeakMap<FireOutcome, FirstClaimed>();

  outcomeOf(r: CallResult): Outcome {
    if (r.kind === 'taken-over') return { kind: 'taken-over', msg: r.attempt.msg };
    const o = r.kind === 'not-called' ? this.missed(r.attempt, r.reason, r.text, r.latenessMs) : this.called(r.attempt, r.definition.timer, r.result, r.latenessMs, r.target, r.notBefore, r.sent);
    if (r.attempt.firstClaim === true && o.kind !== 'taken-over') {
      o.row.firstClaim = true;
      this.firstClaimed.set(o.row, { app: r.attempt.definition?.timer.app ?? null, sent: r.kind === 'called' && r.sent });
    }
    return o;
  }

  /** Writes the outcome's row; resolves with the fire's result once it is durable. */
  async record(o: Outcome): Promise<FireResult> {
    if (o.kind === 'taken-over') {
      this.metrics.fenced.inc();
      this.logger.warn(`fire ${o.msg.fireId} attempt ${o.msg.attempt}: taken over by another executor before its call (this process was taken for dead); not called`);
      return 'fenced';
    }
    if (o.kind === 'dead-letter') this.metrics.deadLettered.inc();
    let applied = await this.recorder.record(o.row);
    const first = this.firstClaimed.get(o.row);
    if (first && this.first) {
      this.first.settled(o.msg.fireId);
      if (!applied) applied = await this.first.refused(o.row, first.app, first.sent);
    }
    if (!applied) return this.fenced(o.msg);
    switch (o.kind) {
      case 'succeeded':
        this.metrics.deliveries.inc({ outcome: 'succeeded' });
        return 'succeeded';
      case 'retry':
        return 'retry';
      case 'dead-letter':
        this.metrics.deliveries.inc({ outcome: 'failed' });
        this.logger.warn(`fire ${o.msg.fireId} failed after attempt ${o.msg.attempt}: ${o.row.error}`);
        return 'failed';
      case 'missed':
        this.metrics.missed.inc({ reason: o.reason });
        this.logger.log(`fire ${o.msg.fireId} missed: ${o.text}`);
        return 'missed';
    }
  }

  /** Counts a retry once its message is stored by the broker. */
  retried(o: Extract<Outcome, { kind: 'retry' }>): void {
    const { msg } = o;
    if (!o.used) {
      this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt} not sent (${o.row.error}); again at ${o.at}, no attempt used`);
      return;
    }
    this.metrics.retries.inc();
    this.metrics.deliveries.inc({ outcome: 'retry' });
    this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt} failed (${o.row.error}); attempt ${o.next.attempt} at ${o.at}`);
  }

  /**
   * The callback's result. `sent` false: the origin's state refused the call (docs/behaviour.md,
   * "Adaptive delivery"): see {@link notSent}.
   */
  private called(claimed: ClaimedAttempt, timer: TimerEntity, result: CallbackResult, lateness: number, target: number, notBefore: number, sent: boolean): Outcome {
    const { msg, token } = claimed;
    if (result.ok) {
      // The common case, built as one literal (no spread of an attempt base): this runs once per fire.
      const row: FireOutcome = {
        timerId: msg.timerId,
        runAt: msg.runAt,
        token,
        attempt: msg.attempt,
        status: TaskStatus.Succeeded,
        httpStatus: result.status ?? null,
        costMs: result.costMs,
        latenessMs: lateness,
        error: result.error ?? null,
        output: result.output ?? null,
        claimedBy: token,
        claimedUntil: null,
        startedAt: target + lateness,
        response: result.response ?? null,
      };
      return { kind: 'succeeded', msg, row };
    }

    const base: AttemptBase = {
      timerId: msg.timerId,
      runAt: msg.runAt,
      token,
      attempt: msg.attempt,
      httpStatus: result.status ?? null,
      costMs: result.costMs,
      latenessMs: lateness,
      error: result.error ?? null,
      output: result.output ?? null,
      // The callback started `lateness` after its target, run_at plus the fire's jitter (the call
      // stage measures both from one clock reading).
      startedAt: target + lateness,
      response: result.response ?? null,
    };

    if (!sent) return this.notSent(claimed, timer, base, result, notBefore);

    const maxAttempts = Math.max(1, timer.maxAttempts);
    if (result.retryable && msg.attempt < maxAttempts) {
      const at = Math.max(this.clock.now() + retryDelayMs(timer.backoffMs, msg.attempt), notBefore);
      const row: FireOutcome = { ...base, status: TaskStatus.Running, claimedBy: null, claimedUntil: at + this.config.leaseMs };
      return { kind: 'retry', msg, row, next: { ...msg, attempt: msg.attempt + 1 }, at, used: true };
    }

    return this.finalFailure(msg, base, result, msg.attempt, result.retryable ? 'attempts exhausted' : 'not retryable');
  }

  /**
   * A call the origin's state refused (origin busy, circuit open, Retry-After): nothing was sent, so
   * no attempt is used. The row records the refusal (status running, its reason as the error, the
   * entry in the fire's attempts with no status and no cost) with a lease ending at `notBefore`, and
   * the same attempt is published again for then: its claim takes the row back (an expired lease of
   * the same attempt). Bounded by time instead ({@link unsentDeadline}): a refusal that would push
   * the fire past its deadline ends it, a first attempt recorded missed (`late`, it was never called),
   * a later one dead-lettered and recorded failed (`not sent before its deadline`).
   */
  private notSent(claimed: ClaimedAttempt, timer: TimerEntity, base: AttemptBase, result: CallbackResult, notBefore: number): Outcome {
    const { msg } = claimed;
    const now = this.clock.now();
    // Back in the quiet part of a second: a busy origin's refusals of one instant come back together
    // 1 s later, at another instant, where they would run beside the other apps' calls
    // (docs/benchmarks.md, "Measurements behind the code").
    const at = offInstants(Math.max(now, notBefore));
    const deadline = unsentDeadline(timer, msg.runAt, msg.attempt, this.config.misfireWindowMs, this.config.callbackTimeoutMaxMs);
    if (at > deadline) {
      const text = `not sent before its deadline ${new Date(deadline).toISOString()} (${result.error ?? 'refused'})`;
      if (msg.attempt === 1) return this.missed(claimed, 'late', text, base.latenessMs);
      return this.finalFailure(msg, { ...base, error: text }, result, msg.attempt - 1, 'not sent before its deadline');
    }
    // A lease that ends just before `at`: the claim takes an expired lease of the same attempt (`<` now).
    const row: FireOutcome = { ...base, status: TaskStatus.Running, claimedBy: null, claimedUntil: at - 1 };
    return { kind: 'retry', msg, row, next: msg, at, used: false };
  }

  /** Failed for good: the dead letter says why, the row is recorded failed. */
  private finalFailure(msg: TaskMessage, base: AttemptBase, result: CallbackResult, attemptsMade: number, reason: string): Outcome {
    const properties = {
      [MESSAGE_PROPERTIES.error]: (base.error ?? 'failed').slice(0, 512),
      [MESSAGE_PROPERTIES.httpStatus]: String(result.status ?? ''),
      [MESSAGE_PROPERTIES.attempts]: String(attemptsMade),
      [MESSAGE_PROPERTIES.reason]: reason,
    };
    const { token } = base;
    return { kind: 'dead-letter', msg, row: { ...base, status: TaskStatus.Failed, claimedBy: token, claimedUntil: null }, properties };
  }

  /** Not called: the timer is gone, disabled or deleted, a policy skips the fire, or it is too late. */
  private missed({ msg, token }: ClaimedAttempt, reason: MissedReason, text: string, latenessMs: number | null): Outcome {
    const row: FireOutcome = {
      timerId: msg.timerId,
      runAt: msg.runAt,
      token,
      attempt: msg.attempt,
      status: TaskStatus.Missed,
      httpStatus: null,
      costMs: null,
      latenessMs,
      error: text,
      output: null,
      claimedBy: token,
      claimedUntil: null,
    };
    return { kind: 'missed', msg, row, reason, text, notify: MISSED_REASONS_NOTIFIED.includes(reason) };
  }

  private fenced(msg: TaskMessage): FireResult {
    this.metrics.fenced.inc();
    this.logger.warn(`fire ${msg.fireId} attempt ${msg.attempt}: the claim passed to another executor (lease expired); outcome dropped, theirs counts`);
    return 'fenced';
  }
}

/** `at`, or the start of the quiet part of its second after it when it is not in one. */
function offInstants(at: number): number {
  return quietAt(at) ?? at;
}
