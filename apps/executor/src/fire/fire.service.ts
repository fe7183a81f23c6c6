import { Inject, Injectable, Logger } from '@nestjs/common';
import { parseTaskMessage, parseTaskPayload, TaskMessage } from '@timer/contracts';
import { Clock, CLOCK } from '@timer/platform';
import { ExecutorConfig } from '../config/executor.env';
import { AppShareGate } from '../delivery-control/app-share.gate';
import { ExecutorMetrics } from './executor.metrics';
import { FireAdmission } from './fire-admission.service';
import { FireDelivery } from './fire-delivery.service';
import { FireLane } from './fire-lanes';
import { FireResult } from './fire.types';

/** A fire takes its lane slot this long before run_at: time for its claim (a batched UPDATE) before its call. */
export const SLOT_LEAD_MS = 100;

/**
 * One task message, start to finish (docs/pipeline.md, "executor"): parsed, admitted (early deferral,
 * settled duplicates, the claim: {@link FireAdmission}), then delivered (definition, misfire, callback,
 * recorded outcome, retry or dead letter: {@link FireDelivery}). Resolves once the outcome is durable,
 * so the transport's ack follows invariant 4; throws (the message is nacked) when it is not.
 */
@Injectable()
export class FireService {
  private readonly logger = new Logger(FireService.name);

  constructor(
    private readonly admission: FireAdmission,
    private readonly delivery: FireDelivery,
    private readonly metrics: ExecutorMetrics,
    private readonly shares: AppShareGate,
    private readonly config: ExecutorConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * A task message of one fire or many, each fire in a slot of `lane`. Resolves once every fire's
   * outcome is durable; when one is not, throws after the others finished, so the message is nacked and
   * comes back whole (its settled fires are then dropped as duplicates before any claim).
   */
  async handleMessage(raw: unknown, properties: Record<string, string>, lane: FireLane): Promise<FireResult[]> {
    const parsed = parseTaskPayload(raw);
    if (!parsed.ok) return [this.invalid(parsed.reason, raw)];
    const results = await Promise.allSettled(parsed.value.map((msg) => this.inLane(msg, properties, lane)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return results.map((r) => (r as PromiseFulfilledResult<FireResult>).value);
  }

  /**
   * A fire due soon waits for its time before it takes a slot, so slots go to fires being claimed,
   * called and recorded rather than to fires waiting: at 5,000 fires/s a step's fires arrive ~0.7 s
   * early, and 1,000 slots held that long let only ~1,300 fires/s through. Far-ahead fires take their
   * slot at once: the admission hands them back to the broker.
   */
  private async inLane(msg: TaskMessage, properties: Record<string, string>, lane: FireLane): Promise<FireResult> {
    const wait = msg.runAt - SLOT_LEAD_MS - this.clock.now();
    if (wait > 0 && wait + SLOT_LEAD_MS <= this.config.maxEarlyWaitMs) await this.clock.sleep(wait);
    return lane.run(() => this.handleFire(msg, properties));
  }

  /** A message of one fire, outside any lane (tests and tools). */
  async handle(raw: unknown, properties: Record<string, string> = {}): Promise<FireResult> {
    const parsed = parseTaskMessage(raw);
    return parsed.ok ? this.handleFire(parsed.value, properties) : this.invalid(parsed.reason, raw);
  }

  private async handleFire(msg: TaskMessage, properties: Record<string, string>): Promise<FireResult> {
    // Fair delivery: the app's share of the handlers is taken first and held until the outcome.
    const share = await this.shares.enter(msg, properties);
    if (!share.entered) return 'deferred-share';
    try {
      const admission = await this.admission.admit(msg, properties);
      return admission.admitted ? await this.delivery.deliver(admission.attempt) : admission.result;
    } finally {
      share.leave();
    }
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
