import type { ConsumerDeserializer, IncomingEvent } from '@nestjs/microservices';
import type { ReceivedMessage } from '@timer/pulsar';

/** What {@link ServerPulsar} passes as the deserializer's `options`. */
export interface PulsarDeserializeOptions {
  /** The registered pattern whose consumer received the message. */
  pattern: string;
  /** The full topic name. */
  channel: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Default consumer-side deserializer of {@link ServerPulsar}: the event's pattern is the pattern
 * whose consumer received the message; its data is the payload parsed as JSON. A payload that is
 * not UTF-8 JSON cannot be decoded: it throws, and the server dead-letters the message after a
 * few deliveries (`ServerPulsarOptions.undecodable`).
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
  let text: string;
  try {
    text = utf8.decode(payload);
  } catch {
    throw new Error(`payload is not UTF-8 (${payload.length} bytes)`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`payload is not JSON (${payload.length} bytes): ${(err as Error).message}`);
  }
}
