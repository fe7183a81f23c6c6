/**
 * The driver-neutral Pulsar client surface the rest of the code base uses. The WebSocket driver
 * (`ws-pulsar-client.ts`) implements it today; a native driver can implement it where one installs.
 */

/** A message id as the broker encodes it (base64 of MessageIdData over the WebSocket API). */
export type MessageId = string;

export type SubscriptionType = 'Exclusive' | 'Shared' | 'Failover' | 'Key_Shared';

export interface PulsarClientOptions {
  /** Broker web service URL, e.g. `http://127.0.0.1:8080` (https for TLS; ws/wss is derived). */
  serviceUrl: string;
  /** Token for the broker's token authentication; sent as `Authorization: Bearer`. */
  token?: string;
  /** CA bundle (PEM) to trust for https/wss; default: the system store. */
  tlsCaPem?: string;
  /** Accept self-signed broker certificates (tests only). */
  tlsAllowInsecure?: boolean;
  /** Time allowed to open one WebSocket (ms). */
  connectTimeoutMs?: number;
  /** Reconnect backoff: first delay and cap (ms). */
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  /** Time a send may wait for the broker's ack before it is failed (ms). */
  sendTimeoutMs?: number;
  /** Where the client logs reconnects; default: Nest-free console-less no-op. */
  logger?: PulsarLogger;
}

export interface PulsarLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A topic name: `persistent://tenant/namespace/topic` (or `non-persistent://...`). */
export type TopicName = string;

export interface ProducerOptions {
  topic: TopicName;
  producerName?: string;
  /** Upper bound of sends awaiting the broker's ack; further sends wait for room. */
  maxPendingMessages?: number;
}

export interface OutgoingMessage {
  payload: Buffer | string;
  key?: string;
  properties?: Record<string, string>;
  /** Absolute delivery time, epoch ms (Shared / Key_Shared subscriptions only). */
  deliverAt?: number;
  /** Relative delivery delay, ms (Shared / Key_Shared subscriptions only). */
  deliverAfterMs?: number;
}

export interface Producer {
  readonly topic: TopicName;
  /** Resolves with the message id once the broker has persisted the message. */
  send(message: OutgoingMessage): Promise<MessageId>;
  /** Resolves when every send issued so far has settled. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface DeadLetterPolicy {
  /** Deliveries after which a message goes to the dead-letter topic instead. */
  maxRedeliverCount: number;
  /** Default: `<topic>-<subscription>-DLQ`, as the broker names it. */
  deadLetterTopic?: TopicName;
}

export interface ConsumerOptions {
  topic: TopicName;
  subscription: string;
  subscriptionType?: SubscriptionType;
  consumerName?: string;
  /** Messages the broker may push ahead of processing. */
  receiverQueueSize?: number;
  /** Delay before a negatively acked message is redelivered (ms). */
  negativeAckRedeliveryDelayMs?: number;
  /** Redeliver messages left unacked this long (ms); 0 = never. */
  ackTimeoutMs?: number;
  deadLetter?: DeadLetterPolicy;
  initialPosition?: 'Earliest' | 'Latest';
}

export interface ReceivedMessage {
  readonly topic: TopicName;
  readonly messageId: MessageId;
  readonly payload: Buffer;
  readonly key?: string;
  readonly properties: Record<string, string>;
  /** Epoch ms the producer published it. */
  readonly publishTime: number;
  /** How often the broker delivered it before (0 on first delivery). */
  readonly redeliveryCount: number;
}

export type MessageListener = (message: ReceivedMessage, consumer: Consumer) => void;

export interface Consumer {
  readonly topic: TopicName;
  readonly subscription: string;
  /** Next message; waits until one arrives. Rejects once the consumer is closed. */
  receive(): Promise<ReceivedMessage>;
  /** Acknowledge; survives a reconnect (re-sent on the new connection until confirmed or closed). */
  acknowledge(message: ReceivedMessage): Promise<void>;
  /** Ask for redelivery after the configured negative-ack delay. */
  negativeAcknowledge(message: ReceivedMessage): Promise<void>;
  /** Stop receiving: no new messages are handed out; unacked ones are redelivered elsewhere. */
  close(): Promise<void>;
}

export interface PulsarClient {
  createProducer(options: ProducerOptions): Promise<Producer>;
  subscribe(options: ConsumerOptions): Promise<Consumer>;
  /** Close every producer and consumer this client opened. */
  close(): Promise<void>;
}
