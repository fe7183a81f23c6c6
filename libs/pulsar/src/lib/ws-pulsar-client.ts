import { resolveSettings, type ConnectionSettings } from './connection-settings';
import { PulsarClosedError } from './errors';
import { retryUntil } from './retry-until';
import { PulsarAdmin } from './pulsar-admin';
import type {
  Consumer,
  ConsumerOptions,
  Producer,
  ProducerOptions,
  PulsarClient,
  PulsarClientOptions,
} from './pulsar-client.interface';
import { parseTopicName } from './topic-name';
import { WsConsumer } from './ws-consumer';
import { WsProducer } from './ws-producer';

/**
 * PulsarClient over the broker's WebSocket API (`/ws/v2/...`, needs `webSocketServiceEnabled`),
 * for where the native client cannot be installed. Each producer and consumer owns its
 * WebSocket session(s) and reconnects on its own; this class only creates and tracks them.
 *
 * Beyond the WebSocket API: `initialPosition: 'Earliest'` is done by creating the subscription
 * through the admin API before subscribing, since the 3.0 proxy has no parameter for it.
 */
export class WsPulsarClient implements PulsarClient {
  private readonly settings: ConnectionSettings;
  private readonly admin: PulsarAdmin;
  private readonly producers = new Set<WsProducer>();
  private readonly consumers = new Set<WsConsumer>();
  private closed = false;

  constructor(options: PulsarClientOptions) {
    this.settings = resolveSettings(options);
    this.admin = new PulsarAdmin({ ...options, requestTimeoutMs: this.settings.connectTimeoutMs });
  }

  /** Opens the producer's session(s); retries transient failures up to `operationTimeoutMs`. */
  async createProducer(options: ProducerOptions): Promise<Producer> {
    this.assertOpen();
    const producer = new WsProducer(this.settings, options, (p) => this.producers.delete(p));
    this.producers.add(producer);
    try {
      await producer.start();
    } catch (error) {
      this.producers.delete(producer);
      throw error;
    }
    return producer;
  }

  /** Subscribes; retries transient failures up to `operationTimeoutMs`; a 4xx refusal (e.g. 409 for a busy Exclusive subscription) rejects at once. */
  async subscribe(options: ConsumerOptions): Promise<Consumer> {
    this.assertOpen();
    const consumer = new WsConsumer(this.settings, options, (c) => this.consumers.delete(c));
    if (options.initialPosition === 'Earliest' && parseTopicName(options.topic).domain === 'persistent') {
      await retryUntil(() => this.admin.ensureSubscription(options.topic, options.subscription, 'Earliest'), {
        what: `creating subscription ${options.subscription} on ${options.topic}`,
        timeoutMs: this.settings.operationTimeoutMs,
        logger: this.settings.logger,
        cancelled: () => this.closed,
      });
    }
    this.consumers.add(consumer);
    try {
      await consumer.start();
    } catch (error) {
      this.consumers.delete(consumer);
      throw error;
    }
    return consumer;
  }

  /** Closes every producer (waiting for their in-flight sends) and consumer this client opened. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.producers].map((p) => p.close()));
    await Promise.allSettled([...this.consumers].map((c) => c.close()));
  }

  private assertOpen(): void {
    if (this.closed) throw new PulsarClosedError('Pulsar client is closed');
  }
}
