import { BaseRpcContext } from '@nestjs/microservices';
import type { Consumer, MessageId, ReceivedMessage, TopicName } from '@timer/pulsar';

/** `[message, consumer, pattern]`: the arguments behind a {@link PulsarContext}. */
export type PulsarContextArgs = [message: ReceivedMessage, consumer: Consumer, pattern: string];

/**
 * The `@Ctx()` of a handler served by {@link ServerPulsar}. The transport acknowledges the message
 * itself once the handler has completed (and negatively acknowledges it when the handler fails);
 * handlers should not ack through {@link getConsumer} unless they know what they are doing.
 *
 * @publicApi
 */
export class PulsarContext extends BaseRpcContext<PulsarContextArgs> {
  constructor(args: PulsarContextArgs) {
    super(args);
  }

  /** The message as the client delivered it. */
  getMessage(): ReceivedMessage {
    return this.args[0];
  }

  getMessageId(): MessageId {
    return this.args[0].messageId;
  }

  getKey(): string | undefined {
    return this.args[0].key;
  }

  getProperties(): Record<string, string> {
    return this.args[0].properties;
  }

  /** How often the broker delivered this message before (0 on first delivery). */
  getRedeliveryCount(): number {
    return this.args[0].redeliveryCount;
  }

  /** Epoch ms the producer published the message. */
  getPublishTime(): number {
    return this.args[0].publishTime;
  }

  /** The full topic name the message came from. */
  getTopic(): TopicName {
    return this.args[0].topic;
  }

  /** The consumer that received the message. */
  getConsumer(): Consumer {
    return this.args[1];
  }

  /** The pattern (as registered with `@EventPattern`) this message was routed to. */
  getPattern(): string {
    return this.args[2];
  }
}
