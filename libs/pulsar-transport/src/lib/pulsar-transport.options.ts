import type { ConsumerDeserializer, ProducerSerializer } from '@nestjs/microservices';
import type { ConsumerOptions, PulsarClient, PulsarClientOptions } from '@timer/pulsar';
import type { UNDECODABLE_REASON } from './undecodable-messages';

/** Creates the {@link PulsarClient} a transport uses; the transport closes it on `close()`. */
export type PulsarClientFactory = () => PulsarClient | Promise<PulsarClient>;

/**
 * The admin operations the server needs to provision what it consumes. `PulsarAdmin` from
 * `@timer/pulsar` implements it; every call must be idempotent (succeed when the thing exists).
 */
export interface PulsarProvisioner {
  ensureTenant(tenant: string): Promise<unknown>;
  /** `namespace` is `tenant/namespace`. */
  ensureNamespace(namespace: string): Promise<unknown>;
  /** A full topic name (`persistent://tenant/namespace/topic`). */
  ensureTopic(topic: string): Promise<unknown>;
  /** Creates a durable subscription at `position` when missing; an existing one keeps its position. */
  ensureSubscription(topic: string, subscription: string, position?: 'Earliest' | 'Latest'): Promise<unknown>;
}

export type PulsarProvisionerFactory = () => PulsarProvisioner | Promise<PulsarProvisioner>;

/** Transport status, as `server.status` / `client.status` emit it. */
export type PulsarStatus = 'connecting' | 'connected' | 'disconnected';

/** A message {@link ServerPulsar} moved to a dead-letter topic (see `ServerPulsarOptions.undecodable`). */
export interface PulsarDeadLetter {
  /** The pattern, topic and subscription it was consumed on. */
  pattern: string;
  topic: string;
  subscription: string;
  messageId: string;
  /** Where it was published. */
  deadLetterTopic: string;
  /** Deliveries it had, the last included. */
  deliveries: number;
  reason: typeof UNDECODABLE_REASON;
  /** What the deserializer said (at most 300 characters). */
  error: string;
}

/** Events a {@link ServerPulsar} reports through `on(event, callback)`. */
export type PulsarServerEvents = {
  /**
   * A transport-level failure that is logged and survived: a failed receive, ack or negative
   * ack (the broker redelivers the message), a message no handler took, or an undecodable
   * message that could not be dead-lettered (it is redelivered and tried again).
   */
  error: (error: unknown) => void;
  /** A message was dead-lettered and acknowledged (count it: it will not be handled). */
  deadLetter: (deadLetter: PulsarDeadLetter) => void;
};

/** What {@link ServerPulsar} does with messages its deserializer rejects. */
export interface UndecodableOptions {
  /**
   * The topic they go to (a pattern-style name: local, `tenant/namespace/topic`, or full). Default:
   * `<topic>-<subscription>-DLQ` for each consumed topic, the name Pulsar's own dead-letter policy uses.
   */
  deadLetterTopic?: string;
  /**
   * With `provision`, this subscription is created on the dead-letter topic(s) at Earliest, so the
   * broker keeps what arrives there (a topic without subscription or retention discards it). Without
   * it, give the dead-letter topic a subscription yourself (the roles do, through the topology).
   */
  initialSubscription?: string;
  /** Deliveries before a message is dead-lettered (default 3; 1 = at once). */
  maxDeliveries?: number;
}

/**
 * How one pattern is consumed. Everything but `subscription` and `concurrency` is passed to
 * `PulsarClient.subscribe` as it is.
 */
export interface PulsarConsumerConfig
  extends Partial<Omit<ConsumerOptions, 'topic' | 'subscription' | 'listener'>> {
  /** Subscription name on the pattern's topic. */
  subscription?: string;
  /**
   * Messages of this consumer handled at the same time. Default: `receiverQueueSize` when set,
   * else {@link DEFAULT_CONCURRENCY}. Use 1 to handle one message after the other in arrival order.
   */
  concurrency?: number;
}

export const DEFAULT_SUBSCRIPTION = 'nest-pulsar';
export const DEFAULT_CONCURRENCY = 16;
export const DEFAULT_CLOSE_TIMEOUT_MS = 30_000;

export interface ServerPulsarOptions {
  /** Options for `WsPulsarClient` from `@timer/pulsar`, or a factory of any {@link PulsarClient}. */
  client: PulsarClientOptions | PulsarClientFactory;
  /**
   * The admin used to provision (see {@link provision}): a {@link PulsarProvisioner} or a factory of
   * one. Default, when `client` is options: a `PulsarAdmin` from `@timer/pulsar` on the same URL/token.
   */
  admin?: PulsarProvisioner | PulsarProvisionerFactory;
  /**
   * On `listen`, idempotently create the tenant, namespace, topic and subscription of every pattern
   * before subscribing (default true; `provisionTopology`: a new subscription starts at Earliest), so
   * events published before the first start are kept. Turn off where the service
   * account may not create them. Non-persistent topics get neither topic nor subscription.
   */
  provision?: boolean;
  /** Tenant of local-name patterns (default `public`). */
  tenant?: string;
  /** Namespace of local-name patterns (default `default`). */
  namespace?: string;
  /**
   * Consumer settings for every pattern. `subscription` defaults to {@link DEFAULT_SUBSCRIPTION},
   * `subscriptionType` to `Shared`.
   */
  consumer?: PulsarConsumerConfig;
  /** Per-pattern consumer settings, keyed by the pattern as given to `@EventPattern`; override `consumer`. */
  consumers?: Record<string, PulsarConsumerConfig>;
  /**
   * What to do with a message routed to a pattern without handler (only possible with a custom
   * deserializer that picks the pattern): `nack` (default; redelivered, dead-lettered if a policy
   * is set) or `ack` (dropped). Either way it is logged.
   */
  onMissingHandler?: 'nack' | 'ack';
  /** How long `close()` waits for in-flight handlers before closing anyway (ms, default 30 000). */
  closeTimeoutMs?: number;
  /**
   * How long `listen` keeps retrying when the broker is unreachable or answers 5xx (ms, default 0:
   * one attempt). Roles set it so that starting during a broker restart waits instead of exiting.
   */
  startupTimeoutMs?: number;
  /**
   * Turns a received message into `{ pattern, data }` (default {@link PulsarDeserializer}). When it
   * throws, the message cannot be decoded: see {@link undecodable}.
   */
  deserializer?: ConsumerDeserializer;
  /**
   * A message the deserializer rejects is negatively acknowledged until its `maxDeliveries`-th
   * delivery (default 3), then published as it is (payload, key, properties, plus `REAL_TOPIC`,
   * `ORIGIN_MESSAGE_ID`, `x-timer-reason: undecodable` and `x-timer-error`) to the dead-letter topic,
   * acknowledged, logged once and reported to `on('deadLetter')`. It is never redelivered forever.
   */
  undecodable?: UndecodableOptions;
}

export interface ClientPulsarOptions {
  /** Options for `WsPulsarClient` from `@timer/pulsar`, or a factory of any {@link PulsarClient}. */
  client: PulsarClientOptions | PulsarClientFactory;
  /** Tenant of local-name patterns (default `public`). */
  tenant?: string;
  /** Namespace of local-name patterns (default `default`). */
  namespace?: string;
  /** Passed to every producer the client creates. */
  producer?: {
    maxPendingMessages?: number;
    /**
     * Patterns (local or full topic names) whose producer lets the broker batch messages into one
     * entry: about half the broker CPU per message, at up to `batchingMaxPublishDelayMs` (default 1)
     * of added latency. Only for Shared subscriptions whose consumers tolerate a redelivered batch
     * (a nack or a crash redelivers every message of the batch). Delayed messages are never batched.
     */
    batching?: readonly string[];
    batchingMaxPublishDelayMs?: number;
  };
  /** Turns `{ pattern, data }` into an `OutgoingMessage` (default {@link PulsarSerializer}). */
  serializer?: ProducerSerializer;
}
