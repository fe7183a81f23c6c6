import { Injectable, Logger } from '@nestjs/common';
import { parseTaskMessage } from '@timer/contracts';
import { AppShareGate } from '../delivery-control/app-share.gate';
import { ExecutorMetrics } from './executor.metrics';
import { FireAdmission } from './fire-admission.service';
import { FireDelivery } from './fire-delivery.service';
import { FireResult } from './fire.types';

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
  ) {}

  async handle(raw: unknown, properties: Record<string, string> = {}): Promise<FireResult> {
    const parsed = parseTaskMessage(raw);
    if (!parsed.ok) {
      this.metrics.invalid.inc();
      this.logger.error(`dropping an invalid task message (${parsed.reason}): ${safeJson(raw)}`);
      return 'invalid';
    }
    // Fair delivery: the app's share of the handlers is taken first and held until the outcome.
    const share = await this.shares.enter(parsed.value, properties);
    if (!share.entered) return 'deferred-share';
    try {
      const admission = await this.admission.admit(parsed.value, properties);
      return admission.admitted ? await this.delivery.deliver(admission.attempt) : admission.result;
    } finally {
      share.leave();
    }
  }
}

function safeJson(v: unknown): string {
  try {
    return (JSON.stringify(v) ?? String(v)).slice(0, 300);
  } catch {
    return String(v).slice(0, 300);
  }
}
