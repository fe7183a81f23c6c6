/**
 * In-memory PulsarClient for unit tests (not exported from the library's index).
 *
 * Topics hold subscriptions; a message sent to a topic is queued on every subscription that
 * exists at that time. Consumers of one subscription share its queue (like Shared). Unacked
 * messages go back to the queue on negative ack (after `negativeAckRedeliveryDelayMs`, default 0)
 * and on consumer close, with `redeliveryCount` + 1 (unless `redeliveryTracking` is off, as on the
 * broker's Exclusive and Failover subscriptions, or after a broker restart).
 */
import type {
  Consumer,
  ConsumerOptions,
  MessageId,
  OutgoingMessage,
  Producer,
  ProducerOptions,
  PulsarClient,
  ReceivedMessage,
} from '@timer/pulsar';
import type { PulsarProvisioner } from '../lib/pulsar-transport.options';

interface Waiter {
  resolve: (message: ReceivedMessage) => void;
  reject: (err: Error) => void;
}

class FakeSubscription {
  readonly queue: ReceivedMessage[] = [];
  readonly waiters: { consumer: FakeConsumer; waiter: Waiter }[] = [];

  push(message: ReceivedMessage, front = false): void {
    const next = this.waiters.shift();
    if (next) {
      next.consumer.track(message);
      next.waiter.resolve(message);
      return;
    }
    if (front) {
      this.queue.unshift(message);
    } else {
      this.queue.push(message);
    }
  }
}

export interface FakeSentMessage extends OutgoingMessage {
  topic: string;
  messageId: MessageId;
}

export class FakeProducer implements Producer {
  closed = false;
  flushed = 0;

  constructor(
    private readonly owner: FakePulsarClient,
    readonly options: ProducerOptions,
  ) {}

  get topic(): string {
    return this.options.topic;
  }

  async send(message: OutgoingMessage): Promise<MessageId> {
    if (this.closed) {
      throw new Error('producer closed');
    }
    if (this.owner.sendError) {
      throw this.owner.sendError;
    }
    return this.owner.publish(this.topic, message);
  }

  async flush(): Promise<void> {
    this.flushed++;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

export class FakeConsumer implements Consumer {
  closed = false;
  readonly unacked = new Map<MessageId, ReceivedMessage>();

  constructor(
    private readonly owner: FakePulsarClient,
    private readonly sub: FakeSubscription,
    readonly options: ConsumerOptions,
  ) {}

  get topic(): string {
    return this.options.topic;
  }

  get subscription(): string {
    return this.options.subscription;
  }

  track(message: ReceivedMessage): void {
    this.unacked.set(message.messageId, message);
  }

  receive(): Promise<ReceivedMessage> {
    if (this.closed) {
      return Promise.reject(new Error('consumer closed'));
    }
    const message = this.sub.queue.shift();
    if (message) {
      this.track(message);
      return Promise.resolve(message);
    }
    return new Promise((resolve, reject) => this.sub.waiters.push({ consumer: this, waiter: { resolve, reject } }));
  }

  async acknowledge(message: ReceivedMessage): Promise<void> {
    if (this.closed) {
      throw new Error('consumer closed');
    }
    this.unacked.delete(message.messageId);
    this.owner.acks.push({ topic: this.topic, subscription: this.subscription, message });
  }

  async negativeAcknowledge(message: ReceivedMessage): Promise<void> {
    if (this.closed) {
      throw new Error('consumer closed');
    }
    this.unacked.delete(message.messageId);
    this.owner.nacks.push({ topic: this.topic, subscription: this.subscription, message });
    const redeliver = () => this.sub.push(this.owner.redelivered(message));
    const delay = this.options.negativeAckRedeliveryDelayMs ?? 0;
    if (delay > 0) {
      setTimeout(redeliver, delay).unref();
    } else {
      redeliver();
    }
  }

  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    for (let i = this.sub.waiters.length - 1; i >= 0; i--) {
      if (this.sub.waiters[i].consumer === this) {
        const [{ waiter }] = this.sub.waiters.splice(i, 1);
        waiter.reject(new Error('consumer closed'));
      }
    }
    for (const message of this.unacked.values()) {
      this.sub.push(this.owner.redelivered(message), true);
    }
    this.unacked.clear();
  }
}

export interface FakeSettlement {
  topic: string;
  subscription: string;
  message: ReceivedMessage;
}

export class FakePulsarClient implements PulsarClient {
  readonly topics = new Map<string, Map<string, FakeSubscription>>();
  readonly producers: FakeProducer[] = [];
  readonly consumers: FakeConsumer[] = [];
  readonly sent: FakeSentMessage[] = [];
  readonly acks: FakeSettlement[] = [];
  readonly nacks: FakeSettlement[] = [];
  closed = false;
  /** When set, every send rejects with it. */
  sendError: Error | null = null;
  /** When off, redeliveries keep `redeliveryCount` 0 (the broker tracks it on Shared / Key_Shared only). */
  redeliveryTracking = true;
  private nextId = 1;

  async createProducer(options: ProducerOptions): Promise<FakeProducer> {
    const producer = new FakeProducer(this, options);
    this.producers.push(producer);
    return producer;
  }

  async subscribe(options: ConsumerOptions): Promise<FakeConsumer> {
    const consumer = new FakeConsumer(this, this.subscription(options.topic, options.subscription), options);
    this.consumers.push(consumer);
    return consumer;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.consumers.map((c) => c.close()));
    await Promise.all(this.producers.map((p) => p.close()));
  }

  /** The subscription, created when missing. */
  subscription(topic: string, name: string): FakeSubscription {
    let subs = this.topics.get(topic);
    if (!subs) {
      subs = new Map();
      this.topics.set(topic, subs);
    }
    let sub = subs.get(name);
    if (!sub) {
      sub = new FakeSubscription();
      subs.set(name, sub);
    }
    return sub;
  }

  publish(topic: string, message: OutgoingMessage): MessageId {
    const messageId = `fake-${this.nextId++}`;
    this.sent.push({ ...message, topic, messageId });
    const received: ReceivedMessage = {
      topic,
      messageId,
      payload: Buffer.isBuffer(message.payload) ? message.payload : Buffer.from(message.payload, 'utf8'),
      key: message.key,
      properties: { ...(message.properties ?? {}) },
      publishTime: Date.now(),
      redeliveryCount: 0,
    };
    for (const sub of this.topics.get(topic)?.values() ?? []) {
      sub.push({ ...received, properties: { ...received.properties } });
    }
    return messageId;
  }

  /** The message as it is delivered again. */
  redelivered(message: ReceivedMessage): ReceivedMessage {
    return { ...message, redeliveryCount: this.redeliveryTracking ? message.redeliveryCount + 1 : 0 };
  }

  /** Messages queued (not handed out) on a subscription. */
  backlog(topic: string, subscription: string): number {
    return this.topics.get(topic)?.get(subscription)?.queue.length ?? 0;
  }
}

/** Records provisioning calls; creates the subscriptions on the fake client when given one. */
export class FakeProvisioner implements PulsarProvisioner {
  readonly calls: string[] = [];

  constructor(private readonly client?: FakePulsarClient) {}

  async ensureTenant(tenant: string): Promise<void> {
    this.calls.push(`tenant ${tenant}`);
  }

  async ensureNamespace(namespace: string): Promise<void> {
    this.calls.push(`namespace ${namespace}`);
  }

  async ensureTopic(topic: string): Promise<void> {
    this.calls.push(`topic ${topic}`);
  }

  async ensureSubscription(topic: string, subscription: string, position?: 'Earliest' | 'Latest'): Promise<void> {
    this.calls.push(`subscription ${topic} ${subscription} ${position ?? '-'}`);
    this.client?.subscription(topic, subscription);
  }
}
