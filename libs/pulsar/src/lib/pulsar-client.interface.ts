/**
 * The driver-neutral Pulsar client surface the rest of the code base uses. The WebSocket driver
 * (`ws-pulsar-client.ts`) implements it today; a native driver can implement it where one installs.
 *
 * Refinements made while implementing the WebSocket driver (all optional, so the original surface
 * is unchanged):
 * - `PulsarClientOptions.operationTimeoutMs` / `keepAliveIntervalMs`: createProducer/subscribe must
 *   ride out a broker that is restarting (retry transient failures for a bounded time), and a
 *   half-open TCP connection is only noticed by pinging.
 * - `ProducerOptions.connections`: the proxy handles each WebSocket session on its own; spreading
 *   sends over N sessions lets a producer use more of the broker's threads. The gain was within noise
 *   (the consumer side is the tighter limit), so default 1
 *   (docs/benchmarks.md, "Measurements behind the code").
 * - `ProducerOptions.sendTimeoutMs`: per-producer override of the client default.
 * - `ProducerOptions.batchingEnabled`: proxy-side batching raises throughput but has caveats (see its
 *   doc), so it is opt-in (docs/benchmarks.md, "Measurements behind the code").
 * - `ConsumerOptions.listener`: `MessageListener` was declared but not reachable; it is the cheap
 *   way to consume at high rates (no promise per message).
 * - `Consumer.receive(timeoutMs?)`: racing `receive()` against a timer leaves a waiter behind that
 *   silently takes the next message; a bounded receive has to be part of the consumer.
 * - `Consumer.acknowledge` documents exactly what "confirmed" means over the WebSocket API, which
 *   has no ack receipt.
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
  /** Reconnect backoff: first delay (ms, default 100). */
  reconnectInitialDelayMs?: number;
  /**
   * Reconnect backoff cap (ms, default 1000): a broker that is back is noticed within about this
   * long, however long it was away (a growing delay cost a 24 s restart a minute more).
   */
  reconnectMaxDelayMs?: number;
  /** Time a send may wait for the broker's ack before it is failed (ms); 0 = never. Default 30000. */
  sendTimeoutMs?: number;
  /**
   * How long createProducer/subscribe keep retrying transient failures (connection refused,
   * timeouts, HTTP 5xx) before rejecting (ms). 4xx answers fail at once. Default 30000.
   */
  operationTimeoutMs?: number;
  /** Ping interval; a session without a pong for one interval is dropped and re-opened (ms). Default 30000. */
  keepAliveIntervalMs?: number;
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
  /** Upper bound of sends awaiting the broker's ack; further sends wait for room. Default 1000. */
  maxPendingMessages?: number;
  /**
   * WebSocket sessions to spread sends over (default 1). With more than one, messages of one
   * producer are no longer published in send order.
   */
  connections?: number;
  /** Overrides the client's `sendTimeoutMs` for this producer. */
  sendTimeoutMs?: number;
  /**
   * Let the proxy's producer batch messages into one entry (default false). Faster (about half the
   * broker CPU per message), but: a negative ack, ack timeout or consumer crash redelivers the whole
   * batch, and Key_Shared key affinity is lost. An ack of a batched message whose session is gone
   * is dropped by WsConsumer (a later session could take it for the whole batch), so the batch is
   * redelivered instead. Delayed messages (deliverAt/deliverAfterMs) are never batched.
   */
  batchingEnabled?: boolean;
  /** Max delay a message waits for its batch to fill (ms, default 1); only with batchingEnabled. */
  batchingMaxPublishDelayMs?: number;
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
  /** Messages the broker may push ahead of processing (the WebSocket proxy caps this at 1000). */
  receiverQueueSize?: number;
  /** Delay before a negatively acked message is redelivered (ms). */
  negativeAckRedeliveryDelayMs?: number;
  /** Redeliver messages left unacked this long (ms); 0 = never; otherwise at least 1000. */
  ackTimeoutMs?: number;
  /** Dead-letter policy; the broker applies it to Shared and Key_Shared subscriptions. */
  deadLetter?: DeadLetterPolicy;
  /** Where a new subscription starts; applies only when the subscription does not exist yet. */
  initialPosition?: 'Earliest' | 'Latest';
  /**
   * Called for each message instead of queueing it for `receive()` (which then rejects). Errors it
   * throws are logged; the message is neither acked nor nacked for it.
   */
  listener?: MessageListener;
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
  /**
   * Next message; waits until one arrives. Rejects once the consumer is closed. With `timeoutMs`,
   * rejects with PulsarTimeoutError if none arrives in time (and then takes no message).
   */
  receive(timeoutMs?: number): Promise<ReceivedMessage>;
  /**
   * Acknowledge; survives a reconnect (re-sent on the new connection until confirmed or closed).
   * Over the WebSocket API "confirmed" means: the ack frame was written to an open session's socket
   * (the API sends no ack receipt). An ack issued while disconnected is queued and written after
   * the reconnect; it rejects with PulsarClosedError if the consumer closes first. An ack written
   * just before the connection drops can still be lost, in which case the broker redelivers the
   * message (at-least-once).
   */
  acknowledge(message: ReceivedMessage): Promise<void>;
  /**
   * Ask for redelivery after the configured negative-ack delay. For a message received on an
   * earlier session it resolves without sending: that session's close already made the broker
   * redeliver it.
   */
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
