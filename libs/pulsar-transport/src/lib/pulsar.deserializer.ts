import type { ConsumerDeserializer, IncomingEvent } from '@nestjs/microservices';
import type { ReceivedMessage } from '@timer/pulsar';

/** What {@link ServerPulsar} passes as the deserializer's `options`. */
export interface PulsarDeserializeOptions {
  /** The registered pattern whose consumer received the message. */
  pattern: string;
  /** The full topic name. */
  channel: string;
}

/**
 * Default consumer-side deserializer of {@link ServerPulsar}: the event's pattern is the pattern
 * whose consumer received the message; its data is the payload parsed as JSON, or the raw
 * payload Buffer when it is not JSON.
 *
 * A custom deserializer receives the {@link ReceivedMessage} and {@link PulsarDeserializeOptions}
 * and may route to another registered pattern by returning it.
 */
export class PulsarDeserializer implements ConsumerDeserializer {
  deserialize(message: ReceivedMessage, options?: Record<string, unknown>): IncomingEvent {
    const pattern = (options as PulsarDeserializeOptions | undefined)?.pattern;
    return { pattern, data: decodePayload(message.payload) };
  }
}

function decodePayload(payload: Buffer): unknown {
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    return payload;
  }
}
