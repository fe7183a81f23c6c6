import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { MESSAGE_PROPERTIES, parseTaskMessage, parseTaskPayload, TaskMessage, TRACEPARENT_PATTERN } from '@timer/contracts';
import { Clock, CLOCK, NO_TRACING, Tracing } from '@timer/platform';
import { ExecutorConfig } from '../config/executor.env';
import { Admission } from '../admit/admission';
import { FireAdmission } from '../admit/fire-admission.service';
import { NotCalled } from '../call/call-result';
import { FireDelivery } from '../call/fire-delivery.service';
import { AppShareGate } from '../intake/app-share.gate';
import { FireLane } from '../intake/fire-lanes';
import { SLOT_LEAD_MS, SlotLeads } from '../intake/slot-leads';
import { AttemptOutcomes, Outcome } from '../settle/attempt-outcomes.service';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { ClaimedAttempt, FireResult } from '../shared/fire.types';
import { endedWith } from '../shared/fire-tracing';
import { InstantDiagnostics } from '../shared/instant-diagnostics';
import { InstantWaits } from '../shared/instant-waits';
import { FirePublisher } from './fire-publisher';

/** A fire worked on, and the hand-back to wait for once its lane slot is free again. */
interface Worked {
  result: FireResult;
  handedBack?: Promise<void>;
}

/**
 * One task message, start to finish (docs/architecture.md, "executor"), through four stages that each
 * return a value: intake (a lane slot and the app's share: {@link FireLane}, {@link AppShareGate}),
 * admit ({@link FireAdmission}: claimed, deferred or skipped), call ({@link FireDelivery}: a
 * `CallResult`), settle ({@link AttemptOutcomes}: an `Outcome`, recorded). This class alone sends
 * anything back to the broker ({@link FirePublisher}: hand-back, defer, retry, dead letter). Resolves
 * once the outcome is durable, so the transport's ack follows invariant 4; throws (the message is
 * nacked) when it is not.
 */
@Injectable()
export class FireService {
  private readonly logger = new Logger(FireService.name);
  private readonly waits: InstantWaits;
  private readonly leads: SlotLeads;

  constructor(
    private readonly admission: FireAdmission,
    private readonly delivery: FireDelivery,
    private readonly outcomes: AttemptOutcomes,
    private readonly publisher: FirePublisher,
    private readonly metrics: ExecutorMetrics,
    private readonly shares: AppShareGate,
    private readonly config: ExecutorConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly diag?: InstantDiagnostics,
    @Optional() private readonly tracing: Tracing = NO_TRACING,
  ) {
    this.waits = new InstantWaits(clock);
    this.leads = new SlotLeads(this.waits, clock);
  }

  /**
   * A task message of one fire or many, each fire in a slot of `lane`. Resolves once every fire's
   * outcome is durable; when one is not, throws after the others finished, so the message is nacked and
   * comes back whole (its settled fires are then dropped as duplicates before any claim).
   */
  async handleMessage(raw: unknown, properties: Record<string, string>, lane: FireLane, redeliveries = 0): Promise<FireResult[]> {
    const parsed = parseTaskPayload(raw);
    if (!parsed.ok) return [this.invalid(parsed.reason, raw)];
    if (this.tracing.enabled && parsed.value.length === 1) traceOf(parsed.value[0], properties);
    this.diag?.did('message', parsed.value.length);
    const takingIn = lane.takeIn(parsed.value.length);
    if (takingIn) await takingIn;
    const results = await Promise.allSettled(parsed.value.map((msg) => this.inLane(msg, properties, lane, redeliveries > 0)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return results.map((r) => (r as PromiseFulfilledResult<FireResult>).value);
  }

  /**
   * Intake: a fire due soon waits for its time before it takes a slot, so slots go to fires being
   * claimed, called and recorded, not to fires waiting (docs/benchmarks.md, "Measurements behind the
   * code"); a far-ahead fire takes its slot at once, to be deferred by the admission.
   */
  private async inLane(msg: TaskMessage, properties: Record<string, string>, lane: FireLane, redelivered: boolean): Promise<FireResult> {
    try {
      const wait = msg.runAt - SLOT_LEAD_MS - this.clock.now();
      // A fire its app's share will not take is handed back in the quiet part of the second, off the
      // instants where the other apps' claims and calls run (docs/benchmarks.md, "Measurements behind
      // the code"); else grouped by app, so several apps' fires of one instant are released in turns.
      if (wait > 0 && wait + SLOT_LEAD_MS <= this.config.maxEarlyWaitMs) {
        await (this.shares.wouldHandBack(msg, properties) ? this.waits.quiet() : this.leads.until(lane, msg.runAt, this.shares.appOf(msg) ?? ''));
      } else if (wait <= 0 && this.shares.wouldHandBack(msg, properties)) await this.waits.quiet();
      const worked = await lane.run(() => this.handleFire(msg, properties, redelivered));
      await worked.handedBack;
      return worked.result;
    } finally {
      lane.giveBack(); // taken in by handleMessage
    }
  }

  /** A message of one fire, outside any lane (tests and tools). */
  async handle(raw: unknown, properties: Record<string, string> = {}): Promise<FireResult> {
    const parsed = parseTaskMessage(raw);
    if (!parsed.ok) return this.invalid(parsed.reason, raw);
    if (this.tracing.enabled) traceOf(parsed.value, properties);
    const worked = await this.handleFire(parsed.value, properties);
    await worked.handedBack;
    return worked.result;
  }

  /**
   * The stages of one fire. Its app's share is held until the outcome; a hand-back is awaited only
   * after the lane slot is given back, so the publish does not keep another app's fires out of the lane.
   */
  private async handleFire(msg: TaskMessage, properties: Record<string, string>, redelivered = false): Promise<Worked> {
    const entry = this.shares.enter(msg, properties);
    const share = entry instanceof Promise ? await entry : entry;
    if (!share.entered) {
      this.diag?.did('hand-back');
      return { result: 'deferred-share', handedBack: this.publisher.handBack(msg, share.at, share.deferrals) };
    }
    try {
      const admission = await (this.tracing.enabled ? this.admitTraced(msg, properties, redelivered) : this.admission.admit(msg, properties, redelivered));
      switch (admission.kind) {
        case 'claimed':
          return { result: await this.callAndSettle(admission.attempt) };
        case 'deferred':
          await this.publisher.defer(admission.msg, admission.at, admission.recheck);
          this.admission.deferred(admission);
          return { result: admission.result };
        case 'skipped':
          return { result: admission.result };
      }
    } finally {
      share.leave();
    }
  }

  /** The call, then its outcome recorded and published; the call's part of its instant ends after that. */
  private async callAndSettle(attempt: ClaimedAttempt): Promise<FireResult> {
    const called = await this.delivery.deliver(attempt).catch(async (e: unknown) => {
      // Failed before its call: the claim goes back, so the message's redelivery need not wait for its lease.
      if (!(e instanceof NotCalled)) throw e;
      await this.admission.giveBack(attempt);
      throw e.reason;
    });
    try {
      const outcome = this.outcomes.outcomeOf(called);
      const settling = this.onDone(outcome);
      const result = await (this.tracing.enabled ? this.traced('timer.fire.outcome', attempt, settling) : settling);
      await this.delivery.settled(called, result);
      return result;
    } finally {
      called.instantSent?.();
      called.instantAnswered?.();
    }
  }

  /**
   * The one place an outcome reaches the broker, in the order that keeps a crash between the two
   * writes safe (docs/architecture.md, "executor": write orders).
   */
  private async onDone(outcome: Outcome): Promise<FireResult> {
    switch (outcome.kind) {
      case 'retry': {
        // Recorded first (fenced), published second: a crash in between leaves the row waiting for a
        // retry nobody scheduled; this message's redelivery takes the fire over once the lease ends.
        const result = await this.outcomes.record(outcome);
        if (result === 'fenced') return result;
        await this.publisher.retry(outcome.next, outcome.at);
        this.outcomes.retried(outcome);
        return result;
      }
      case 'dead-letter':
        // Dead-lettered first: a crash before the record redelivers and dead-letters again, rather
        // than recording failed with no dead letter.
        await this.publisher.deadLetter(outcome.msg, outcome.properties);
        return this.outcomes.record(outcome);
      case 'missed':
        // Told to the failure notifier first, as a dead letter is.
        if (outcome.notify) await this.publisher.missed(outcome.msg, outcome.text.slice(0, 512));
        return this.outcomes.record(outcome);
      default:
        return this.outcomes.record(outcome);
    }
  }

  /** The admission (early deferral, duplicates, the claim) as the fire's `timer.fire.admit` span. */
  private async admitTraced(msg: TaskMessage, properties: Record<string, string>, redelivered: boolean): Promise<Admission> {
    const span = this.tracing.start('timer.fire.admit', msg.traceparent, 'consumer', { 'timer.fire_id': msg.fireId, 'timer.attempt': msg.attempt });
    try {
      const admission = await this.admission.admit(msg, properties, redelivered);
      span.setAttribute('timer.result', admission.kind === 'claimed' ? 'claimed' : admission.result);
      span.end();
      return admission;
    } catch (e) {
      span.end((e as Error).message);
      throw e;
    }
  }

  /** `work` as a span of the fire's trace, with its result as an attribute. */
  private traced(name: string, { msg }: ClaimedAttempt, work: Promise<FireResult>): Promise<FireResult> {
    const span = this.tracing.start(name, msg.traceparent, 'internal', { 'timer.fire_id': msg.fireId, 'timer.attempt': msg.attempt });
    return endedWith(span, work, (r) => ['timer.result', r]);
  }

  private invalid(reason: string, raw: unknown): FireResult {
    this.metrics.invalid.inc();
    this.logger.error(`dropping an invalid task message (${reason}): ${safeJson(raw)}`);
    return 'invalid';
  }
}

function safeJson(v: unknown): string {
  try {
    return (JSON.stringify(v) ?? String(v)).slice(0, 300);
  } catch {
    return String(v).slice(0, 300);
  }
}

/** A one-fire message whose payload has no trace context takes its `traceparent` property's (a tool's, or an older producer's). */
function traceOf(msg: TaskMessage, properties: Record<string, string>): void {
  const traceparent = properties[MESSAGE_PROPERTIES.traceparent];
  if (msg.traceparent === undefined && traceparent !== undefined && TRACEPARENT_PATTERN.test(traceparent)) msg.traceparent = traceparent;
}
