import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { CallbackResult } from '@timer/callback';
import { MESSAGE_PROPERTIES, MISSED_REASONS_NOTIFIED, TaskMessage } from '@timer/contracts';
import { FireOutcome, TaskStatus, TimerEntity } from '@timer/dal';
import { ExecutorConfig } from '../config/executor.env';
import { unsentDeadline } from '../delivery-control/unsent-deadline';
import { retryDelayMs } from './backoff';
import { ExecutorMetrics, MissedReason } from './executor.metrics';
import { FirePublisher } from './fire-publisher';
import { quietAt } from './instant-waits';
import { ClaimedAttempt, FireResult } from './fire.types';
import { OutcomeRecorder } from './outcome-recorder.service';

/** What every outcome of one attempt writes, before its status and claim. */
type AttemptBase = Omit<FireOutcome, 'status' | 'claimedBy' | 'claimedUntil'>;

/**
 * The end of one claimed attempt: its outcome recorded (batched, fenced by the claim), then the next
 * attempt published or the fire dead-lettered. Each method resolves once the outcome is durable, and
 * says 'fenced' when the claim had passed on.
 */
@Injectable()
export class AttemptOutcomes {
  private readonly logger = new Logger(AttemptOutcomes.name);

  constructor(
    private readonly recorder: OutcomeRecorder,
    private readonly publisher: FirePublisher,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * The callback's result: succeeded; failed with attempts left (retry, not before `notBefore`: the
   * origin's Retry-After or open circuit); or failed for good (dead letter). `sent` false: the origin's
   * state refused the call (docs/behaviour.md, "Adaptive delivery"): see {@link notSent}.
   */
  async called(claimed: ClaimedAttempt, timer: TimerEntity, result: CallbackResult, lateness: number, target = claimed.msg.runAt, notBefore = 0, sent = true): Promise<FireResult> {
    const { msg, token } = claimed;
    if (result.ok) {
      // The common case, built as one literal (no spread of an attempt base): this runs once per fire.
      const applied = await this.recorder.record({
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
      });
      if (!applied) return this.fenced(msg);
      this.metrics.deliveries.inc({ outcome: 'succeeded' });
      return 'succeeded';
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
      // The callback started `lateness` after its target, run_at plus the fire's jitter (FireDelivery
      // measures both from one clock reading).
      startedAt: target + lateness,
      response: result.response ?? null,
    };

    if (!sent) return this.notSent(claimed, timer, base, result, notBefore);

    const maxAttempts = Math.max(1, timer.maxAttempts);
    if (result.retryable && msg.attempt < maxAttempts) {
      const retryAt = Math.max(this.clock.now() + retryDelayMs(timer.backoffMs, msg.attempt), notBefore);
      // Recorded first (fenced), published second: a crash in between leaves the row waiting for a
      // retry nobody scheduled; this message's redelivery takes the fire over once the lease ends.
      const applied = await this.recorder.record({ ...base, status: TaskStatus.Running, claimedBy: null, claimedUntil: retryAt + this.config.leaseMs });
      if (!applied) return this.fenced(msg);
      await this.publisher.retry({ ...msg, attempt: msg.attempt + 1 }, retryAt);
      this.metrics.retries.inc();
      this.metrics.deliveries.inc({ outcome: 'retry' });
      this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt} failed (${result.error}); attempt ${msg.attempt + 1} at ${retryAt}`);
      return 'retry';
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
  private async notSent(claimed: ClaimedAttempt, timer: TimerEntity, base: AttemptBase, result: CallbackResult, notBefore: number): Promise<FireResult> {
    const { msg } = claimed;
    const now = this.clock.now();
    // Back in the quiet part of a second: a busy origin's refusals of one instant come back together
    // 1 s later, at another instant, where they would run beside the other apps' calls
    // (docs/benchmarks.md, "Measurements behind the code").
    const retryAt = offInstants(Math.max(now, notBefore));
    const deadline = unsentDeadline(timer, msg.runAt, msg.attempt, this.config.misfireWindowMs, this.config.callbackTimeoutMaxMs);
    if (retryAt > deadline) {
      const text = `not sent before its deadline ${new Date(deadline).toISOString()} (${result.error ?? 'refused'})`;
      if (msg.attempt === 1) return this.missed(claimed, 'late', text, base.latenessMs);
      return this.finalFailure(msg, { ...base, error: text }, result, msg.attempt - 1, 'not sent before its deadline');
    }
    // A lease that ends just before retryAt: the claim takes an expired lease of the same attempt (`<` now).
    const applied = await this.recorder.record({ ...base, status: TaskStatus.Running, claimedBy: null, claimedUntil: retryAt - 1 });
    if (!applied) return this.fenced(msg);
    await this.publisher.retry(msg, retryAt);
    this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt} not sent (${result.error}); again at ${retryAt}, no attempt used`);
    return 'retry';
  }

  /**
   * Final: dead-letter first (a crash before the record redelivers and dead-letters again, rather
   * than recording failed with no dead letter), then record failed.
   */
  private async finalFailure(msg: TaskMessage, base: AttemptBase, result: CallbackResult, attemptsMade: number, reason: string): Promise<FireResult> {
    await this.publisher.deadLetter(msg, {
      [MESSAGE_PROPERTIES.error]: (base.error ?? 'failed').slice(0, 512),
      [MESSAGE_PROPERTIES.httpStatus]: String(result.status ?? ''),
      [MESSAGE_PROPERTIES.attempts]: String(attemptsMade),
      [MESSAGE_PROPERTIES.reason]: reason,
    });
    this.metrics.deadLettered.inc();
    const { token } = base;
    const applied = await this.recorder.record({ ...base, status: TaskStatus.Failed, claimedBy: token, claimedUntil: null });
    if (!applied) return this.fenced(msg);
    this.metrics.deliveries.inc({ outcome: 'failed' });
    this.logger.warn(`fire ${msg.fireId} failed after attempt ${msg.attempt}: ${base.error}`);
    return 'failed';
  }

  /**
   * Not called: the timer is gone, disabled or deleted, or the misfire policy skips a late fire. A
   * reason the owner did not ask for (`MISSED_REASONS_NOTIFIED`) is published for the failure
   * notifier first, as a dead letter is: a crash before the record redelivers and publishes again.
   */
  async missed({ msg, token }: ClaimedAttempt, reason: MissedReason, text: string, latenessMs: number | null = null): Promise<FireResult> {
    if (MISSED_REASONS_NOTIFIED.includes(reason)) await this.publisher.missed(msg, text.slice(0, 512));
    const applied = await this.recorder.record({
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
    });
    if (!applied) return this.fenced(msg);
    this.metrics.missed.inc({ reason });
    this.logger.log(`fire ${msg.fireId} missed: ${text}`);
    return 'missed';
  }

  /** The claim was taken over before its call went out (this process was taken for dead): nothing sent, nothing written. */
  takenOver(msg: TaskMessage): FireResult {
    this.metrics.fenced.inc();
    this.logger.warn(`fire ${msg.fireId} attempt ${msg.attempt}: taken over by another executor before its call (this process was taken for dead); not called`);
    return 'fenced';
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
