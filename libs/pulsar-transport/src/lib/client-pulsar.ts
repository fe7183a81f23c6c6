import { Logger } from '@nestjs/common';
import { ClientProxy, ReadPacket, WritePacket } from '@nestjs/microservices';
import type { MessageId, OutgoingMessage, Producer, PulsarClient } from '@timer/pulsar';
import { Observable, throwError } from 'rxjs';
import { createPulsarClient } from './pulsar-driver';
import { PulsarSerializer } from './pulsar.serializer';
import { ClientPulsarOptions, PulsarStatus } from './pulsar-transport.options';
import { DEFAULT_NAMESPACE, DEFAULT_TENANT, resolveTopicName, TopicDefaults } from './topic-name';

/** A producer that takes longer than this to open is logged (its first messages waited for it). */
const SLOW_PRODUCER_MS = 250;

export const REQUEST_RESPONSE_UNSUPPORTED =
  'ClientPulsar supports emit() (events) only; request/response (send / @MessagePattern) is not implemented by the Pulsar transport';

/**
 * Nest `ClientProxy` that publishes events to Apache Pulsar (the `PulsarClient` of `@timer/pulsar`).
 *
 * `emit(pattern, data)` sends to the topic the pattern names (a local name in the configured
 * tenant/namespace, `tenant/namespace/topic`, or a full topic name) and emits the message id once
 * the broker persisted the message. Wrap `data` in a `PulsarRecord` (see `PulsarRecordBuilder`) to
 * set key, properties or a delayed delivery. Producers are created on first use per topic and
 * cached. `send()` (request/response) is refused.
 */
export class ClientPulsar extends ClientProxy<never, PulsarStatus> {
  protected readonly logger = new Logger(ClientPulsar.name);
  protected client: PulsarClient | null = null;
  protected connection: Promise<PulsarClient> | null = null;
  protected readonly producers = new Map<string, Promise<Producer>>();
  private readonly topicDefaults: TopicDefaults;
  private readonly topics = new Map<string, string>();

  constructor(protected readonly options: ClientPulsarOptions) {
    super();
    this.topicDefaults = {
      tenant: options.tenant ?? DEFAULT_TENANT,
      namespace: options.namespace ?? DEFAULT_NAMESPACE,
    };
    this.serializer = options.serializer ?? new PulsarSerializer();
  }

  /** Creates the client once; concurrent and later calls share the same promise. */
  connect(): Promise<PulsarClient> {
    if (!this.connection) {
      this._status$.next('connecting');
      const connection = createPulsarClient(this.options.client).then(
        (client) => {
          this.client = client;
          this._status$.next('connected');
          return client;
        },
        (err: unknown) => {
          if (this.connection === connection) {
            this.connection = null;
          }
          this._status$.next('disconnected');
          throw err;
        },
      );
      this.connection = connection;
    }
    return this.connection;
  }

  /** The full topic name a pattern maps to; resolved once per pattern (patterns come from code). */
  getTopic(pattern: unknown): string {
    const key = this.normalizePattern(pattern as string);
    let topic = this.topics.get(key);
    if (topic === undefined) {
      topic = resolveTopicName(key, this.topicDefaults);
      this.topics.set(key, topic);
    }
    return topic;
  }

  /** Refuses at once (no connection is made): the Pulsar transport is event-only. */
  override send<TResult = unknown, TInput = unknown>(pattern: unknown, _data: TInput): Observable<TResult> {
    return throwError(() => new Error(`${REQUEST_RESPONSE_UNSUPPORTED} (pattern ${JSON.stringify(pattern)})`));
  }

  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    callback({ err: new Error(`${REQUEST_RESPONSE_UNSUPPORTED} (pattern ${JSON.stringify(packet.pattern)})`) });
    return () => undefined;
  }

  /** Serializes and sends one event; resolves with the message id once the broker persisted it. */
  protected async dispatchEvent<T = MessageId>(packet: ReadPacket): Promise<T> {
    const topic = this.getTopic(packet.pattern);
    const message = (await this.serializer.serialize(packet)) as OutgoingMessage;
    const producer = await this.getProducer(topic);
    return (await producer.send(message)) as T;
  }

  /**
   * Opens the producers of `patterns` now instead of on their first message, which would otherwise wait
   * for the WebSocket handshake and the broker's producer (over a second on a loaded broker). Resolves
   * once they are open; one that fails is dropped, and its first message tries again.
   */
  async prepare(patterns: readonly string[]): Promise<void> {
    await Promise.all(patterns.map((pattern) => this.getProducer(this.getTopic(pattern))));
  }

  /** The cached producer of a topic, created on first use. */
  protected getProducer(topic: string): Promise<Producer> {
    let producer = this.producers.get(topic);
    if (!producer) {
      const options = this.options.producer;
      const batching = (options?.batching ?? []).some((pattern) => this.getTopic(pattern) === topic);
      const started = Date.now();
      producer = this.connect()
        .then((client) =>
          client.createProducer({
            topic,
            maxPendingMessages: options?.maxPendingMessages,
            ...(batching ? { batchingEnabled: true, batchingMaxPublishDelayMs: options?.batchingMaxPublishDelayMs } : {}),
          }),
        )
        .then((p) => {
          // The messages that wait for a new producer wait this long: worth a line when it is long.
          const ms = Date.now() - started;
          if (ms >= SLOW_PRODUCER_MS) this.logger.warn(`the producer of ${topic} took ${ms} ms to open`);
          return p;
        });
      const cached = producer;
      this.producers.set(topic, cached);
      cached.catch(() => {
        if (this.producers.get(topic) === cached) {
          this.producers.delete(topic);
        }
      });
    }
    return producer;
  }

  /** Flushes and closes every producer, then closes the client. A later emit connects again. */
  async close(): Promise<void> {
    const producers = [...this.producers.entries()];
    this.producers.clear();
    const connection = this.connection;
    this.connection = null;
    await Promise.allSettled(
      producers.map(async ([topic, pending]) => {
        try {
          const producer = await pending;
          await producer.flush();
          await producer.close();
        } catch (err) {
          this.logger.warn(`Closing producer of ${topic} failed: ${(err as Error)?.message ?? String(err)}`);
        }
      }),
    );
    const client = this.client ?? (connection ? await connection.catch(() => null) : null);
    this.client = null;
    if (client) {
      await client.close().catch((err: unknown) =>
        this.logger.warn(`Closing Pulsar client failed: ${(err as Error)?.message ?? String(err)}`),
      );
    }
    this._status$.next('disconnected');
  }

  /** The {@link PulsarClient} (after `connect`). */
  unwrap<T = PulsarClient>(): T {
    if (!this.client) {
      throw new Error('Not initialized. Please call the "connect" method first.');
    }
    return this.client as T;
  }
}
