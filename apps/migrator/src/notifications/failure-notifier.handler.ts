import { Controller, Logger } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { FailureNotificationKind, parseTaskMessage, TOPICS } from '@timer/contracts';
import { PulsarContext } from '@timer/pulsar-transport';
import { FailureNotifier } from './failure-notifier.service';

/** Dead letters and missed fires on the `failure-notifier` subscription: acked once notified (or nothing to notify), nacked to try later. */
@Controller()
export class FailureNotifierHandler {
  private readonly logger = new Logger(FailureNotifierHandler.name);

  constructor(private readonly notifier: FailureNotifier) {}

  @EventPattern(TOPICS.deadLetter)
  onDeadLetter(@Payload() data: unknown, @Ctx() ctx: PulsarContext): Promise<void> {
    return this.notify(data, ctx, 'dead_letter');
  }

  @EventPattern(TOPICS.missedFires)
  onMissedFire(@Payload() data: unknown, @Ctx() ctx: PulsarContext): Promise<void> {
    return this.notify(data, ctx, 'missed');
  }

  private async notify(data: unknown, ctx: PulsarContext, kind: FailureNotificationKind): Promise<void> {
    const parsed = parseTaskMessage(data);
    if (!parsed.ok) {
      this.logger.error(`dropping an invalid ${kind} message (${parsed.reason}): ${JSON.stringify(data)?.slice(0, 300)}`);
      return;
    }
    await this.notifier.notify({ task: parsed.value, properties: ctx.getProperties(), publishTime: ctx.getPublishTime(), kind });
  }
}
