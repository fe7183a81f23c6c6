import { Inject, Injectable, Optional } from '@nestjs/common';
import { Clock, CLOCK, NO_TRACING, Tracing } from '@timer/platform';
import { CallbackClient, CallbackMethod, CallbackResult, FireIdentity } from '@timer/callback';
import { TaskMessage } from '@timer/contracts';
import { TimerDefinition, TimerEntity, TimerStatus } from '@timer/dal';
import { businessCalendarOf } from '@timer/fire';
import { nextFireTimes, specOf } from '@timer/schedule';
import { ExecutorConfig } from '../config/executor.env';
import { DeliveryControl } from '../delivery-control/delivery-control.service';
import { CallStarts } from '../admit/call-starts.service';
import { callbackPartsOf } from './callback-template';
import { ExecutorMetrics, MissedReason } from '../shared/executor.metrics';
import { ClaimedAttempt, FireResult } from '../shared/fire.types';
import { endedWith } from '../shared/fire-tracing';
import { CallResult, NotCalled } from './call-result';
import { InstantDiagnostics } from '../shared/instant-diagnostics';
import { InstantSends } from '../shared/instant-sends';
import { InstantWaits } from '../shared/instant-waits';
import { fireDelayOf } from '../admit/jitter';
import { LightFirst } from './light-first';
import { MaintenanceGate } from './maintenance-gate.service';
import { catchupDecision } from './misfire';
import { OverlapGuard } from './overlap-guard.service';
import { ResultWebhooks } from './result-webhooks.service';
import { TimerCache } from '../shared/timer-cache.service';

const METHODS: readonly CallbackMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** A claimed fire waiting at most this long for its time marks its call's start during that wait (see `deliver`). */
export const EARLY_CALL_MARK_MS = 250;

/**
 * The call stage (docs/architecture.md, "executor"): one claimed attempt waits for its time, is checked
 * against its timer's definition read again (missing, deleted, disabled), the maintenance windows, the
 * misfire and overlap policies and its origin's state, and is called back with the definition it was
 * claimed with. Returns what happened ({@link CallResult}); records and publishes nothing.
 */
@Injectable()
export class FireDelivery {
  private readonly waits: InstantWaits;
  private readonly lightFirst = new LightFirst();

  constructor(
    private readonly cache: TimerCache,
    private readonly callback: CallbackClient,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly overlap: OverlapGuard,
    private readonly control: DeliveryControl,
    private readonly maintenance: MaintenanceGate,
    private readonly calls: CallStarts,
    @Optional() private readonly sends: InstantSends = new InstantSends(clock),
    @Optional() private readonly diag?: InstantDiagnostics,
    @Optional() private readonly tracing: Tracing = NO_TRACING,
    @Optional() private readonly results?: ResultWebhooks,
  ) {
    this.waits = new InstantWaits(clock);
  }

  /**
   * Runs one claimed attempt up to its call's answer. The result's `instantSent` and `instantAnswered`
   * end the fire's part of its instant; the caller calls them once the outcome is recorded.
   */
  async deliver(attempt: ClaimedAttempt): Promise<CallResult> {
    const { msg, onDemand } = attempt;
    // The definition as the attempt was claimed (the admission's read).
    const claimed = attempt.definition;
    // The jittered target (docs/behaviour.md, "Fire policies"): the fire waits for it and is judged against it.
    const target = msg.runAt + (onDemand ? 0 : fireDelayOf(msg.fireId, claimed?.timer));
    const wait = target - this.clock.now();
    // The call mark's Redis round trip (see below) is taken during a short wait for the fire's time when
    // its origin has a free slot now, not at the due instant, when every fire of the second marks at once
    // (docs/benchmarks.md, "Measurements behind the code"). A death between the mark and the call
    // (at most this wait) flags the call as possibly made: never lost.
    const url = claimed?.timer.notifyHttpParam?.url;
    const earlyMark = wait > 0 && wait <= EARLY_CALL_MARK_MS && this.control.wouldGoNow(url) ? this.calls.beforeCall(attempt.token) : undefined;
    let sent: (() => void) | undefined;
    let answered: (() => void) | undefined;
    if (wait > 0) {
      await this.waits.until(target);
      this.diag?.woke(target);
      sent = this.sends.begin(target);
      // Fair delivery at the due instant: a fire of an app holding more than half its share lets the
      // other apps' fires due at this instant go first, until their calls are answered (LightFirst);
      // after a turn, in which those fires woke and began.
      if (this.heavy(claimed)) {
        this.diag?.did('heavy-wait');
        await nextTurn();
        await this.lightFirst.answered(target);
      } else answered = this.lightFirst.begin(target);
    } else if (this.heavy(claimed)) {
      // Late (a hand-back come back, a retry): it may arrive at another instant, whose light calls go first too.
      await this.lightFirst.allAnswered();
    }
    const progress = { calling: false };
    try {
      const result = await this.atTarget(attempt, claimed, target, wait, earlyMark, progress, sent, answered);
      result.instantSent = sent;
      result.instantAnswered = answered;
      return result;
    } catch (e) {
      sent?.();
      answered?.();
      throw progress.calling ? e : new NotCalled(e);
    }
  }

  /**
   * After the attempt's outcome is recorded: a maintenance deferral's fire published, a final answer
   * sent to the timer's result webhook, its overlap marker kept or released.
   */
  async settled(r: CallResult, outcome: FireResult): Promise<void> {
    if (r.kind === 'not-called' && r.deferred) await this.maintenance.published(r.attempt, r.deferred);
    if (r.kind !== 'called') return;
    // In the background, never delaying the fire (docs/callback-answers.md).
    if (r.sent && (outcome === 'succeeded' || outcome === 'failed')) this.results?.notify(r.definition.timer.resultWebhook, r.attempt.msg, outcome, r.result, this.secretsOf(r.definition));
    if (!r.overlap) return;
    if (outcome === 'retry') await this.overlap.retrying(r.definition.timer, r.attempt);
    else if (outcome !== 'fenced') await this.overlap.settled(r.definition.timer, r.attempt);
  }

  /**
   * {@link deliver} from the fire's time on; `sent` (when it waited for that time: InstantSends)
   * and `answered` (a light app's fire: LightFirst) are called once its call is answered or refused.
   */
  private async atTarget(
    attempt: ClaimedAttempt,
    claimed: TimerDefinition | null,
    target: number,
    wait: number,
    earlyMark: Promise<boolean> | undefined,
    progress: { calling: boolean },
    sent?: () => void,
    answered?: () => void,
  ): Promise<CallResult> {
    const { msg, onDemand } = attempt;

    // Read again after the wait: a disable or delete meanwhile still stops it (within the cache TTL).
    let current = wait > 0 ? (this.cache.peek(msg.timerId) ?? (await this.cache.get(msg.timerId))) : claimed;
    // Not found only on a read that started after the claim saw the fire's row (a shared load may be older).
    current ??= await this.cache.get(msg.timerId, true);
    if (!current) return missed(attempt, 'timer_not_found', 'timer not found');
    if (current.timer.deletedAt !== null) return missed(attempt, 'timer_deleted', 'timer deleted');
    // A completed timer's fire is delivered when asked for (a dead letter replayed after the timer's last fire).
    const asked = onDemand && current.timer.status === TimerStatus.Completed;
    if (current.timer.status !== TimerStatus.Enabled && !asked) return missed(attempt, 'timer_disabled', 'timer disabled');
    const def = claimed ?? current;
    // A scheduled fire in a maintenance window of its timer: skipped or deferred to the window's end.
    if (msg.attempt === 1 && !onDemand && !msg.backfill && this.maintenance.any) {
      const held = await this.maintenance.apply(attempt, current.timer);
      if (held) return held;
    }

    const start = this.clock.now();
    // Retries are late by design (their backoff); the catch-up policy judges the first attempt.
    // A backfill's fires are past on purpose: asked for like a run now, never judged late.
    if (msg.attempt === 1 && !onDemand && !msg.backfill) {
      const decision = catchupDecision(def.timer, start - target, this.config.misfireWindowMs, () => nextFireDue(def.timer, msg.runAt, start));
      if (!decision.deliver) return missed(attempt, decision.reason, decision.text, start - target);
    }
    const overlap = this.overlap.applies(def.timer, attempt);
    if (overlap && msg.attempt === 1) {
      const turn = await this.overlap.enter(def.timer, attempt);
      if (!turn.go) return missed(attempt, 'overlap', `skipped: overlap, fire ${turn.holder} in flight`, start - target);
    } else if (overlap) await this.overlap.resume(def.timer, attempt);
    // Measured after a buffered fire's wait for its turn: when the callback really starts.
    const lateness = this.clock.now() - target;
    this.metrics.lateness.observe(Math.max(0, lateness) / 1000);

    if (attempt.redelivery !== null) this.metrics.redeliveries.inc({ reason: attempt.redelivery });
    // Adaptive delivery: the origin's circuit, Retry-After and concurrency; refused = an attempt deferred, not sent.
    const gate = await this.control.enter(def.timer.notifyHttpParam?.url);
    if (!gate.go) {
      this.diag?.did('origin-refused');
      answered?.();
    }
    // The call's start is marked once it has its origin slot (its connection), right before it goes out (or during the wait above):
    // should this process die, a taker-over of the claim then knows whether the call may have reached
    // the receiver. Refused when the claim was taken over already (this process was taken for dead).
    if (gate.go && !(await (earlyMark ?? this.calls.beforeCall(attempt.token)))) {
      gate.cancel();
      return { kind: 'taken-over', attempt };
    }
    if (gate.go) this.diag?.called(target);
    progress.calling = true;
    const calling = gate.go ? this.call(def, msg, attempt.redelivery !== null, target) : Promise.resolve(gate.result);
    // A refused call ends its part of the instant's burst now; a call made, once it is answered.
    if (!gate.go) sent?.();
    // A call its origin refused (busy for its whole wait, which ends 5 s after an instant: at another
    // one) is recorded and published again in the quiet part of the second, off the instants.
    if (!gate.go) await this.waits.quiet();
    const result = await calling;
    sent?.();
    answered?.();
    if (gate.go) this.diag?.did('call-done');
    if (gate.go) this.metrics.callbackDuration.observe(result.costMs / 1000);
    const notBefore = gate.go ? gate.done(result) : gate.until;
    return { kind: 'called', attempt, definition: def, result, latenessMs: lateness + (gate.go ? gate.waitedMs : 0), target, notBefore, sent: gate.go, overlap };
  }

  private heavy(def: TimerDefinition | null): boolean {
    return def !== null && this.control.shares.heavy(def.timer.app, this.clock.now());
  }

  private call(def: TimerDefinition, msg: TaskMessage, redelivery: boolean, jitteredAt: number): Promise<CallbackResult> {
    const p = def.timer.notifyHttpParam;
    const method = String(p?.method ?? '').toUpperCase() as CallbackMethod;
    if (!p || typeof p.url !== 'string' || !METHODS.includes(method)) {
      return Promise.resolve({ ok: false, costMs: 0, error: `invalid callback: method ${JSON.stringify(p?.method)}`, retryable: false });
    }
    const parts = callbackPartsOf(def.timer, msg);
    // Built field by field (no spreads of temporary objects): this runs once per fire.
    const fire: FireIdentity = { timerId: msg.timerId, runAt: msg.runAt, jitteredAt, attempt: msg.attempt };
    if (redelivery) fire.redelivery = true;
    if (msg.backfill) fire.backfill = true;
    const request = { url: parts.url, header: parts.header, body: parts.body, method, timeoutMs: this.timeoutOf(p.timeoutMs) };
    if (!this.tracing.enabled) return this.callback.deliver(request, fire, this.secretsOf(def));
    // The callback's `traceparent` names this span: the receiver's spans join the fire's trace.
    const span = this.tracing.start('timer.fire.callback', msg.traceparent, 'client', { 'timer.fire_id': msg.fireId, 'timer.attempt': msg.attempt, 'http.request.method': method });
    fire.traceparent = span.traceparent;
    return endedWith(span, this.callback.deliver(request, fire, this.secretsOf(def)), (r) => ['http.response.status_code', r.status ?? 0], (r) => (r.ok ? undefined : (r.error ?? `HTTP ${r.status}`)));
  }

  /** The app's signing secrets, the current first; the one a rotation replaced while its overlap lasts. */
  private secretsOf(def: TimerDefinition): string | string[] | undefined {
    const prev = def.previousSecret;
    if (def.signingSecret === null) return undefined;
    return prev && prev.until > this.clock.now() ? [def.signingSecret, prev.secret] : def.signingSecret;
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

/** Resumes after the timers due now have run (the event loop's check phase). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Whether the timer's fire after `runAt` is due by `now` (`catchupPolicy: latest` then coalesces this one). */
function nextFireDue(timer: TimerEntity, runAt: number, now: number): boolean {
  try {
    // With calendars, the next fire that is delivered: one a calendar excludes is recorded missed, not a later fire to prefer.
    const calendar = businessCalendarOf(timer);
    const next = calendar ? calendar.nextFires(specOf(timer), runAt, 100).find((f) => f.excluded === undefined)?.at : nextFireTimes(specOf(timer), runAt, 1)[0];
    return next !== undefined && next <= now;
  } catch {
    return false; // a schedule that no longer evaluates has no next fire to prefer
  }
}

function missed(attempt: ClaimedAttempt, reason: MissedReason, text: string, latenessMs: number | null = null): CallResult {
  return { kind: 'not-called', attempt, reason, text, latenessMs };
}
