import type { ConnectionSettings } from './connection-settings';
import { PulsarClosedError, PulsarError, PulsarTimeoutError } from './errors';
import type {
  Consumer,
  ConsumerOptions,
  MessageId,
  MessageListener,
  ReceivedMessage,
  SubscriptionType,
  TopicName,
} from './pulsar-client.interface';
import { ReconnectingSession } from './reconnecting-session';
import { canonicalTopicName, topicUrlPath } from './topic-name';
import { decodeConsumerMessage, encodeAckFrame, encodeNackFrame, isBatchedMessageId, parsePublishTime } from './ws-frames';

const SUBSCRIPTION_TYPES: readonly SubscriptionType[] = ['Exclusive', 'Shared', 'Failover', 'Key_Shared'];

/** A received message; remembers which session delivered it (see `negativeAcknowledge`). */
export class WsReceivedMessage implements ReceivedMessage {
  constructor(
    readonly topic: TopicName,
    readonly messageId: MessageId,
    readonly payload: Buffer,
    readonly key: string | undefined,
    readonly properties: Record<string, string>,
    readonly publishTime: number,
    readonly redeliveryCount: number,
    /** Generation of the session that delivered it (internal). */
    readonly session: number,
  ) {}
}

interface QueuedWrite {
  frame: string;
  /** Resolved without writing once the session that delivered the message is gone (asked only then). */
  staleIsMoot: () => boolean;
  session: number;
  resolve(): void;
  reject(error: Error): void;
}

interface Waiter {
  resolve(message: ReceivedMessage): void;
  reject(error: Error): void;
}

/** Builds the consumer session URL; exported for unit tests. */
export function consumerUrl(wsBase: string, options: ConsumerOptions): string {
  const type = options.subscriptionType ?? 'Exclusive';
  if (!SUBSCRIPTION_TYPES.includes(type)) throw new TypeError(`unknown subscriptionType '${type}'`);
  if (!options.subscription) throw new TypeError('subscription is required');
  const params = new URLSearchParams({ subscriptionType: type });
  if (options.receiverQueueSize !== undefined) params.set('receiverQueueSize', String(Math.floor(options.receiverQueueSize)));
  if (options.consumerName) params.set('consumerName', options.consumerName);
  if (options.negativeAckRedeliveryDelayMs !== undefined) {
    params.set('negativeAckRedeliveryDelay', String(Math.floor(options.negativeAckRedeliveryDelayMs)));
  }
  const ackTimeout = options.ackTimeoutMs ?? 0;
  if (ackTimeout > 0) {
    if (ackTimeout < 1000) throw new RangeError(`ackTimeoutMs must be 0 or >= 1000 (broker minimum), got ${ackTimeout}`);
    params.set('ackTimeoutMillis', String(Math.floor(ackTimeout)));
  }
  if (options.deadLetter) {
    if (!(options.deadLetter.maxRedeliverCount >= 1)) throw new RangeError('deadLetter.maxRedeliverCount must be >= 1');
    params.set('maxRedeliverCount', String(Math.floor(options.deadLetter.maxRedeliverCount)));
    if (options.deadLetter.deadLetterTopic) {
      params.set('deadLetterTopic', canonicalTopicName(options.deadLetter.deadLetterTopic));
    }
  }
  const topic = canonicalTopicName(options.topic);
  return `${wsBase}/ws/v2/consumer/${topicUrlPath(topic)}/${encodeURIComponent(options.subscription)}?${params.toString()}`;
}

/**
 * A consumer over the Pulsar WebSocket API (push mode): the proxy pushes up to receiverQueueSize
 * unacknowledged messages; they queue here for `receive()` (or go to the listener).
 *
 * On a dropped session the messages queued here and not yet handed out are discarded (the broker
 * redelivers everything the lost session left unacknowledged) and the session re-opens with
 * backoff. Acks issued while no session is open are written after the reconnect (see
 * `acknowledge`). Subscription semantics (types, negative-ack delay, ack timeout, dead-letter
 * policy) are applied by the proxy's consumer from the session URL's query parameters.
 */
export class WsConsumer implements Consumer {
  readonly topic: TopicName;
  readonly subscription: string;
  private readonly session: ReconnectingSession;
  private readonly label: string;
  private readonly listener: MessageListener | undefined;
  private buffer: (WsReceivedMessage | undefined)[] = [];
  private head = 0;
  private waiters: Waiter[] = [];
  private queued: QueuedWrite[] = [];
  private writing = 0;
  private writesDone: (() => void) | undefined;
  private closed = false;
  private closePromise: Promise<void> | undefined;

  constructor(
    private readonly settings: ConnectionSettings,
    options: ConsumerOptions,
    private readonly onClosed: (consumer: WsConsumer) => void = () => undefined,
  ) {
    this.topic = canonicalTopicName(options.topic);
    this.subscription = options.subscription;
    this.listener = options.listener;
    this.label = `consumer ${this.topic} [${this.subscription}]`;
    this.session = new ReconnectingSession(consumerUrl(settings.wsBase, options), this.label, settings, {
      onOpen: (generation) => this.onOpen(generation),
      onMessage: (text) => this.onFrame(text),
      onDown: () => this.onDown(),
    });
  }

  start(): Promise<void> {
    return this.session.start();
  }

  /**
   * Next message; waits until one arrives (or `timeoutMs` passes: PulsarTimeoutError). Rejects once
   * the consumer is closed, and on a consumer with a listener.
   */
  receive(timeoutMs?: number): Promise<ReceivedMessage> {
    if (this.listener) return Promise.reject(new PulsarError(`${this.label}: receive() is not available with a listener`));
    if (this.closed) return Promise.reject(new PulsarClosedError(`${this.label} is closed`));
    if (this.head < this.buffer.length) {
      const message = this.buffer[this.head] as WsReceivedMessage;
      this.buffer[this.head++] = undefined;
      if (this.head === this.buffer.length) {
        this.buffer = [];
        this.head = 0;
      }
      return Promise.resolve(message);
    }
    if (timeoutMs === undefined) {
      return new Promise<ReceivedMessage>((resolve, reject) => this.waiters.push({ resolve, reject }));
    }
    return new Promise<ReceivedMessage>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(new PulsarTimeoutError(`${this.label}: no message within ${timeoutMs} ms`));
      }, Math.max(0, timeoutMs));
      this.waiters.push(waiter);
    });
  }

  /** See the interface: resolves once the ack frame is written to an open session's socket. */
  acknowledge(message: ReceivedMessage): Promise<void> {
    // A batched message from a session that is gone (now, or by the time a queued ack is written):
    // the broker redelivers its whole batch anyway, and a later session's proxy consumer, which
    // never saw the batch, may take the ack for the whole entry, acking messages nobody handled.
    // Such acks are dropped: a duplicate delivery at worst, never a lost one.
    return this.write(encodeAckFrame(message.messageId), sessionOf(message), () => isBatchedMessageId(message.messageId));
  }

  negativeAcknowledge(message: ReceivedMessage): Promise<void> {
    return this.write(encodeNackFrame(message.messageId), sessionOf(message), () => true);
  }

  /**
   * Stops handing out messages (pending `receive()` calls reject), waits for ack writes in progress,
   * rejects acks still queued for a reconnect, and closes the session; the broker then redelivers
   * every message left unacknowledged to the subscription's other (or next) consumers.
   */
  close(): Promise<void> {
    this.closePromise ??= (async () => {
      this.closed = true;
      const error = new PulsarClosedError(`${this.label} is closed`);
      for (const waiter of this.waiters.splice(0)) waiter.reject(error);
      this.buffer = [];
      this.head = 0;
      if (this.writing > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5_000);
          this.writesDone = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const unwritten = new PulsarClosedError(`${this.label} closed before the ack could be written; the broker will redeliver`);
      for (const write of this.queued.splice(0)) write.reject(unwritten);
      await this.session.close();
      this.onClosed(this);
    })();
    return this.closePromise;
  }

  /** Messages received and not yet handed out (for metrics and tests). */
  get buffered(): number {
    return this.buffer.length - this.head;
  }

  private write(frame: string, session: number, staleIsMoot: () => boolean): Promise<void> {
    if (this.closed) {
      return Promise.reject(new PulsarClosedError(`${this.label} is closed; the broker will redeliver the message`));
    }
    // The session that delivered it is gone, and with it the broker redelivered the message.
    if (session < this.session.currentGeneration && staleIsMoot()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const write: QueuedWrite = { frame, staleIsMoot, session, resolve, reject };
      if (!this.trySend(write)) this.queued.push(write);
    });
  }

  private trySend(write: QueuedWrite): boolean {
    this.writing++;
    const sent = this.session.send(write.frame, (error) => {
      this.writing--;
      if (!error) write.resolve();
      else if (this.closed) write.reject(new PulsarClosedError(`${this.label} closed while writing; the broker will redeliver`));
      else if (!this.trySend(write)) this.queued.push(write);
      if (this.writing === 0) this.writesDone?.();
    });
    if (!sent) this.writing--;
    return sent;
  }

  private onOpen(generation: number): void {
    if (this.queued.length === 0) return;
    const writes = this.queued.splice(0);
    for (const write of writes) {
      if (write.session < generation && write.staleIsMoot()) write.resolve();
      else if (!this.trySend(write)) this.queued.push(write);
    }
  }

  private onDown(): void {
    // Not handed out yet and unacknowledged: the broker redelivers them, so drop our copies.
    this.buffer = [];
    this.head = 0;
  }

  private onFrame(text: string): void {
    if (this.closed) return;
    let frame;
    try {
      frame = decodeConsumerMessage(text);
    } catch {
      this.settings.logger.error(`${this.label}: unreadable frame from broker: ${text.slice(0, 200)}`);
      return;
    }
    if (frame === undefined) return;
    const message = new WsReceivedMessage(
      this.topic,
      frame.messageId,
      Buffer.from(frame.payload, 'base64'),
      frame.key,
      frame.properties ?? {},
      parsePublishTime(frame.publishTime),
      frame.redeliveryCount ?? 0,
      this.session.currentGeneration,
    );
    if (this.listener) {
      try {
        this.listener(message, this);
      } catch (error) {
        this.settings.logger.error(`${this.label}: listener failed: ${(error as Error).message ?? String(error)}`);
      }
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(message);
    else this.buffer.push(message);
  }
}

/** Session generation of a message from this driver; Infinity (never "stale") for foreign objects. */
function sessionOf(message: ReceivedMessage): number {
  return message instanceof WsReceivedMessage ? message.session : Infinity;
}
