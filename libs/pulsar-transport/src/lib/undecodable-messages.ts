import { MESSAGE_PROPERTIES } from '@timer/contracts';
import type { OutgoingMessage, Producer, ReceivedMessage } from '@timer/pulsar';

/** Deliveries of a message the deserializer rejects before {@link ServerPulsar} dead-letters it. */
export const DEFAULT_MAX_UNDECODABLE_DELIVERIES = 3;

/** Longest excerpt of a payload or decode error that goes into a log line or a property. */
export const EXCERPT_CHARS = 300;

/**
 * What a dead-lettered message carries beside its own properties: where it came from (the names
 * Pulsar's own dead-letter policy uses), and why (the names of the executor's dead letters).
 */
export const DEAD_LETTER_PROPERTIES = {
  realTopic: 'REAL_TOPIC',
  originMessageId: 'ORIGIN_MESSAGE_ID',
  reason: MESSAGE_PROPERTIES.reason,
  error: MESSAGE_PROPERTIES.error,
} as const;

/** The `reason` of a message dead-lettered because it could not be decoded. */
export const UNDECODABLE_REASON = 'undecodable' as const;

// Deliveries counted in process: enough for every message a process can be retrying at once.
const TRACKED_MESSAGES = 10_000;

/**
 * The bookkeeping of messages that cannot be decoded: how often each was delivered, and the
 * producers that move them to their dead-letter topic. The broker's `redeliveryCount` is the
 * primary count, but it only exists on Shared and Key_Shared subscriptions and restarts at 0 when
 * the broker does, so deliveries are also counted here: with either, a message reaches its limit.
 */
export class UndecodableMessages {
  private readonly deliveries = new Map<string, number>();
  private readonly producers = new Map<string, Promise<Producer>>();

  constructor(
    readonly maxDeliveries: number,
    private readonly createProducer: (topic: string) => Promise<Producer>,
  ) {}

  /** Counts one failed delivery; returns how many there were (this one included). */
  countDelivery(message: ReceivedMessage): number {
    const key = keyOf(message);
    const count = Math.max(message.redeliveryCount + 1, (this.deliveries.get(key) ?? 0) + 1);
    this.deliveries.delete(key); // re-inserted last: the oldest entry is evicted first
    this.deliveries.set(key, count);
    if (this.deliveries.size > TRACKED_MESSAGES) {
      this.deliveries.delete(this.deliveries.keys().next().value as string);
    }
    return count;
  }

  /**
   * Publishes the message as it came (payload, key, properties) plus where it came from and why,
   * and resolves once the broker persisted it. Its delivery count is then forgotten.
   */
  async deadLetter(deadLetterTopic: string, message: ReceivedMessage, error: string): Promise<void> {
    const record: OutgoingMessage = {
      payload: message.payload,
      key: message.key,
      properties: {
        ...message.properties,
        [DEAD_LETTER_PROPERTIES.realTopic]: message.topic,
        [DEAD_LETTER_PROPERTIES.originMessageId]: message.messageId,
        [DEAD_LETTER_PROPERTIES.reason]: UNDECODABLE_REASON,
        [DEAD_LETTER_PROPERTIES.error]: excerpt(error),
      },
    };
    const producer = await this.producer(deadLetterTopic);
    await producer.send(record);
    this.deliveries.delete(keyOf(message));
  }

  /** Forgets producers and counts (the client that made the producers closes them). */
  clear(): void {
    this.producers.clear();
    this.deliveries.clear();
  }

  private producer(topic: string): Promise<Producer> {
    let producer = this.producers.get(topic);
    if (!producer) {
      producer = this.createProducer(topic);
      this.producers.set(topic, producer);
      // A failed creation is tried again on the next dead letter.
      const created = producer;
      created.catch(() => {
        if (this.producers.get(topic) === created) this.producers.delete(topic);
      });
    }
    return producer;
  }
}

/** At most {@link EXCERPT_CHARS} characters of a text, marked when cut. */
export function excerpt(text: string): string {
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/** A loggable excerpt of a payload: its first {@link EXCERPT_CHARS} bytes as text, control characters escaped. */
export function payloadExcerpt(payload: Buffer): string {
  const text = JSON.stringify(payload.subarray(0, EXCERPT_CHARS).toString('utf8'));
  return payload.length > EXCERPT_CHARS ? `${text}…` : text;
}

function keyOf(message: ReceivedMessage): string {
  return `${message.topic} ${message.messageId}`;
}
