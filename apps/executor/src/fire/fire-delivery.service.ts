import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { CallbackClient, CallbackMethod, CallbackResult } from '@timer/callback';
import { TaskMessage } from '@timer/contracts';
import { TimerDefinition, TimerStatus } from '@timer/dal';
import { ExecutorConfig } from '../config/executor.env';
import { AttemptOutcomes } from './attempt-outcomes.service';
import { callbackPartsOf } from './callback-template';
import { ExecutorMetrics } from './executor.metrics';
import { ClaimedAttempt, FireResult } from './fire.types';
import { misfireDecision } from './misfire';
import { TimerCache } from './timer-cache.service';

const METHODS: readonly CallbackMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The second half of a task message (docs/pipeline.md, "executor"): one claimed attempt waits for
 * run_at, is checked against its timer's definition (missing, deleted, disabled) and the misfire
 * policy, is called back with the definition it was claimed with, and ends in its recorded outcome.
 */
@Injectable()
export class FireDelivery {
  constructor(
    private readonly cache: TimerCache,
    private readonly callback: CallbackClient,
    private readonly outcomes: AttemptOutcomes,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Runs one claimed attempt to its recorded outcome. */
  async deliver(attempt: ClaimedAttempt): Promise<FireResult> {
    const { msg, onDemand } = attempt;
    // The definition as the attempt was claimed: an edit that lands while it waits for run_at does not
    // change what this attempt calls (it finishes under the definition it was claimed with).
    const claimed = await this.cache.get(msg.timerId);
    const wait = msg.runAt - this.clock.now();
    if (wait > 0) await this.clock.sleep(wait);

    // Read again after the wait: a disable or delete meanwhile still stops it (within the cache TTL).
    const current = wait > 0 ? await this.cache.get(msg.timerId) : claimed;
    if (!current) return this.outcomes.missed(attempt, 'timer_not_found', 'timer not found');
    if (current.timer.deletedAt !== null) return this.outcomes.missed(attempt, 'timer_deleted', 'timer deleted');
    if (current.timer.status !== TimerStatus.Enabled) return this.outcomes.missed(attempt, 'timer_disabled', 'timer disabled');
    const def = claimed ?? current;

    const start = this.clock.now();
    const lateness = start - msg.runAt;
    // Retries are late by design (their backoff); the misfire policy judges the first attempt.
    // A backfill's fires are past on purpose: asked for like a run now, never judged late.
    if (msg.attempt === 1 && !onDemand && !msg.backfill) {
      const decision = misfireDecision(def.timer.misfirePolicy, lateness, this.config.misfireWindowMs);
      if (!decision.deliver) return this.outcomes.missed(attempt, 'late', decision.reason, lateness);
    }
    this.metrics.lateness.observe(Math.max(0, lateness) / 1000);

    if (attempt.redelivery !== null) this.metrics.redeliveries.inc({ reason: attempt.redelivery });
    const result = await this.call(def, msg, attempt.redelivery !== null);
    this.metrics.callbackDuration.observe(result.costMs / 1000);
    return this.outcomes.called(attempt, def.timer, result, lateness);
  }

  private call(def: TimerDefinition, msg: TaskMessage, redelivery: boolean): Promise<CallbackResult> {
    const p = def.timer.notifyHttpParam;
    const method = String(p?.method ?? '').toUpperCase() as CallbackMethod;
    if (!p || typeof p.url !== 'string' || !METHODS.includes(method)) {
      return Promise.resolve({ ok: false, costMs: 0, error: `invalid callback: method ${JSON.stringify(p?.method)}`, retryable: false });
    }
    return this.callback.deliver(
      { ...callbackPartsOf(def.timer, msg), method, timeoutMs: this.timeoutOf(p.timeoutMs) },
      { timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt, ...(redelivery ? { redelivery } : {}), ...(msg.backfill ? { backfill: true } : {}) },
      def.signingSecret ?? undefined,
    );
  }

  /**
   * The timer's own callback timeout (`notifyHTTPParam.timeoutMs`), capped at TIMER_CALLBACK_TIMEOUT_MAX_MS:
   * the claim lease is checked at boot against that maximum, so a value stored under a higher one
   * (the maximum lowered since) must not outlast the lease. Undefined: the global timeout.
   */
  private timeoutOf(ms: unknown): number | undefined {
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms <= 0) return undefined;
    return Math.min(ms, this.config.callbackTimeoutMaxMs);
  }
}
