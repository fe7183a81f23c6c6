import { Logger, LoggerService } from '@nestjs/common';
import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import { SUBSCRIPTION_INITIAL_POSITION } from '@timer/contracts';
import { Backoff, retryUntil } from '@timer/pulsar';
import type { Consumer, ConsumerOptions, PulsarClient, ReceivedMessage } from '@timer/pulsar';
import { lastValueFrom } from 'rxjs';
import { createDefaultAdmin, createPulsarClient } from './pulsar-driver';
import { provisionTopology } from './provision-topology';
import { PulsarDeserializer } from './pulsar.deserializer';
import { PulsarContext } from './pulsar.context';
import {
  DEFAULT_CLOSE_TIMEOUT_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_SUBSCRIPTION,
  PulsarConsumerConfig,
  PulsarProvisioner,
  PulsarServerEvents,
  PulsarStatus,
  ServerPulsarOptions,
} from './pulsar-transport.options';
import { DEFAULT_NAMESPACE, DEFAULT_TENANT, resolveTopicName, TopicDefaults } from './topic-name';
import { DEFAULT_MAX_UNDECODABLE_DELIVERIES, excerpt, payloadExcerpt, UNDECODABLE_REASON, UndecodableMessages } from './undecodable-messages';

/** Transport id of {@link ServerPulsar}; pass it to `@EventPattern(pattern, PULSAR_TRANSPORT)` to pin a handler. */
export const PULSAR_TRANSPORT = Symbol.for('timer.transport.pulsar');

interface ConsumerBinding {
  readonly pattern: string;
  readonly topic: string;
  readonly subscription: string;
  readonly concurrency: number;
  /** Where its undecodable messages go. */
  readonly deadLetterTopic: string;
  readonly consumer: Consumer;
  /** Handlers running now (processing through ack / negative ack). */
  readonly inFlight: Set<Promise<void>>;
  readonly workers: Promise<void>[];
}

interface PlannedConsumer {
  pattern: string;
  topic: string;
  concurrency: number;
  deadLetterTopic: string;
  options: ConsumerOptions;
}

/**
 * Nest microservice transport over Apache Pulsar (the `PulsarClient` of `@timer/pulsar`).
 *
 * - Each `@EventPattern` gets one consumer on the topic its pattern names: a local name
 *   (`timer.due`, in the configured tenant/namespace), `tenant/namespace/topic`, or a full
 *   `persistent://tenant/namespace/topic` (see `topic-name.ts`).
 * - A message is acknowledged only after its handler completed (the returned promise resolved /
 *   the returned observable completed) and negatively acknowledged when it threw / errored, so
 *   the broker redelivers it (`PulsarContext.getRedeliveryCount()` counts the deliveries).
 * - A message the deserializer cannot decode is redelivered a few times, then dead-lettered and
 *   acknowledged (`options.undecodable`, `on('deadLetter')`): never redelivered forever.
 * - Per consumer at most `concurrency` handlers run at a time.
 * - `@MessagePattern` (request/response) is not supported: `listen` fails naming the patterns.
 * - `close()` stops receiving, waits for running handlers (up to `closeTimeoutMs`), then closes
 *   consumers and the client.
 */
export class ServerPulsar
  extends Server<PulsarServerEvents, PulsarStatus>
  implements CustomTransportStrategy
{
  protected override readonly logger: LoggerService = new Logger(ServerPulsar.name);
  protected client: PulsarClient | null = null;
  protected bindings: ConsumerBinding[] = [];
  protected stopping = false;
  private closing: Promise<void> | null = null;
  private starting: Promise<void> | null = null;
  private readonly listeners: { [K in keyof PulsarServerEvents]: PulsarServerEvents[K][] } = { error: [], deadLetter: [] };
  private readonly topicDefaults: TopicDefaults;
  private readonly undecodable: UndecodableMessages;

  constructor(protected readonly options: ServerPulsarOptions) {
    super();
    this.transportId = PULSAR_TRANSPORT;
    this.topicDefaults = {
      tenant: options.tenant ?? DEFAULT_TENANT,
      namespace: options.namespace ?? DEFAULT_NAMESPACE,
    };
    this.deserializer = options.deserializer ?? new PulsarDeserializer();
    this.undecodable = new UndecodableMessages(options.undecodable?.maxDeliveries ?? DEFAULT_MAX_UNDECODABLE_DELIVERIES, (topic) =>
      this.unwrap().createProducer({ topic }),
    );
  }

  async listen(callback: (...optionalParams: unknown[]) => unknown): Promise<void> {
    try {
      this.stopping = false;
      this.closing = null;
      // Configuration errors (e.g. a @MessagePattern) fail at once; only connecting is retried.
      this.planConsumers();
      this.starting = retryUntil(() => this.startOnce(), {
        what: 'starting the Pulsar consumers',
        timeoutMs: this.options.startupTimeoutMs ?? 0,
        logger: { log: (m) => this.logger.log(m), warn: (m) => this.logger.warn(m), error: (m) => this.logger.error(m) },
        cancelled: () => this.closing !== null,
      });
      await this.starting;
    } catch (err) {
      await this.close().catch(() => undefined);
      callback(err);
      return;
    }
    callback();
  }

  /** One start attempt; a failed one closes what it opened, so the next begins from nothing. */
  private async startOnce(): Promise<void> {
    if (this.closing) throw new Error('ServerPulsar was closed during start-up');
    try {
      await this.start();
    } catch (err) {
      const bindings = this.bindings;
      const client = this.client;
      this.bindings = [];
      this.client = null;
      await Promise.allSettled(bindings.map((b) => b.consumer.close()));
      await client?.close().catch(() => undefined);
      throw err;
    }
  }

  protected async start(): Promise<void> {
    const planned = this.planConsumers();
    this._status$.next('connecting');
    this.client = await createPulsarClient(this.options.client);
    if (this.options.provision !== false && planned.length > 0) {
      await this.provision(planned);
    }
    for (const plan of planned) {
      const consumer = await this.client.subscribe(plan.options);
      const binding: ConsumerBinding = {
        pattern: plan.pattern,
        topic: plan.topic,
        subscription: plan.options.subscription,
        concurrency: plan.concurrency,
        deadLetterTopic: plan.deadLetterTopic,
        consumer,
        inFlight: new Set(),
        workers: [],
      };
      this.bindings.push(binding);
      this.logger.log(
        `Subscribed "${plan.pattern}" -> ${plan.topic} (subscription ${plan.options.subscription}, ` +
          `${plan.options.subscriptionType}, concurrency ${plan.concurrency})`,
      );
    }
    if (this.stopping) {
      return; // close() was called meanwhile and closes what was opened
    }
    // Start receiving only once every consumer is up, so a failed start handles nothing.
    for (const binding of this.bindings) {
      for (let i = 0; i < binding.concurrency; i++) {
        binding.workers.push(this.runWorker(binding));
      }
    }
    this._status$.next('connected');
  }

  /** Validates the registered handlers and works out one consumer per pattern. */
  protected planConsumers(): PlannedConsumer[] {
    const requestResponse = [...this.messageHandlers.entries()]
      .filter(([, handler]) => !handler.isEventHandler)
      .map(([pattern]) => pattern);
    if (requestResponse.length > 0) {
      throw new Error(
        `ServerPulsar supports @EventPattern only; request/response (@MessagePattern) is not implemented. ` +
          `Offending pattern(s): ${requestResponse.map((p) => JSON.stringify(p)).join(', ')}`,
      );
    }
    const defaults = this.options.consumer ?? {};
    const { maxDeliveries } = this.undecodable;
    if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) {
      throw new Error(`ServerPulsar: undecodable.maxDeliveries must be a positive integer, got ${maxDeliveries}`);
    }
    return [...this.messageHandlers.keys()].map((pattern) => {
      let topic: string;
      try {
        topic = resolveTopicName(pattern, this.topicDefaults);
      } catch (err) {
        throw new Error(`ServerPulsar cannot map @EventPattern ${JSON.stringify(pattern)} to a topic: ${(err as Error).message}`);
      }
      const config: PulsarConsumerConfig = { ...defaults, ...(this.options.consumers?.[pattern] ?? {}) };
      const { concurrency: configuredConcurrency, subscription, ...consumerOptions } = config;
      const concurrency = configuredConcurrency ?? config.receiverQueueSize ?? DEFAULT_CONCURRENCY;
      if (!Number.isInteger(concurrency) || concurrency < 1) {
        throw new Error(`ServerPulsar: concurrency of pattern ${JSON.stringify(pattern)} must be a positive integer, got ${concurrency}`);
      }
      const options: ConsumerOptions = {
        ...consumerOptions,
        topic,
        subscription: subscription ?? DEFAULT_SUBSCRIPTION,
        subscriptionType: consumerOptions.subscriptionType ?? 'Shared',
      };
      const deadLetterName = this.options.undecodable?.deadLetterTopic ?? `${topic}-${options.subscription}-DLQ`;
      let deadLetterTopic: string;
      try {
        deadLetterTopic = resolveTopicName(deadLetterName, this.topicDefaults);
      } catch (err) {
        throw new Error(`ServerPulsar cannot map dead-letter topic ${JSON.stringify(deadLetterName)} to a topic: ${(err as Error).message}`);
      }
      return { pattern, topic, concurrency, deadLetterTopic, options };
    });
  }

  /**
   * Creates tenant, namespace, topic and subscription of every planned consumer, and, given
   * `undecodable.initialSubscription`, the dead-letter topics with it; idempotent, see provisionTopology.
   */
  protected async provision(planned: PlannedConsumer[]): Promise<void> {
    // Provisioning creates every subscription at one position (provisionTopology): a consumer asking
    // for another would silently get it, so say so instead.
    const other = planned.find((p) => p.options.initialPosition !== undefined && p.options.initialPosition !== SUBSCRIPTION_INITIAL_POSITION);
    if (other) {
      throw new Error(
        `ServerPulsar: pattern ${JSON.stringify(other.pattern)} asks for initialPosition ${other.options.initialPosition}, but provisioning creates ` +
          `subscriptions at ${SUBSCRIPTION_INITIAL_POSITION}; create that subscription yourself and set provision: false`,
      );
    }
    const admin = await this.createAdmin();
    const initial = this.options.undecodable?.initialSubscription;
    const deadLetterTopics = initial ? [...new Set(planned.map((p) => p.deadLetterTopic))] : [];
    const n = await provisionTopology(admin, [
      ...planned.map((p) => ({ topic: p.topic, subscriptions: [p.options.subscription] })),
      ...deadLetterTopics.map((topic) => ({ topic, subscriptions: [initial!] })),
    ]);
    this.logger.log(`Provisioned ${n.tenants} tenant(s), ${n.namespaces} namespace(s), ${n.topics} topic(s), ${n.subscriptions} subscription(s)`);
  }

  protected async createAdmin(): Promise<PulsarProvisioner> {
    const admin = this.options.admin;
    if (typeof admin === 'function') {
      return admin();
    }
    if (admin) {
      return admin;
    }
    if (typeof this.options.client === 'function') {
      throw new Error(
        'ServerPulsar: provisioning needs an admin; pass options.admin when options.client is a factory, or set provision: false',
      );
    }
    return createDefaultAdmin(this.options.client);
  }

  /** One of `concurrency` loops per consumer: receive, handle, ack / nack, until close. */
  protected async runWorker(binding: ConsumerBinding): Promise<void> {
    const backoff = new Backoff(200, 5_000);
    while (!this.stopping) {
      let message: ReceivedMessage;
      try {
        message = await binding.consumer.receive();
        backoff.reset();
      } catch (err) {
        if (this.stopping) {
          return;
        }
        this.reportError(`Receive on ${binding.topic} failed: ${describe(err)}`, err);
        await this.pause(backoff.next());
        continue;
      }
      if (this.stopping) {
        // Received while closing: leave it unacked; closing the consumer hands it back to the broker.
        return;
      }
      const processing = this.processMessage(binding, message);
      binding.inFlight.add(processing);
      try {
        await processing;
      } finally {
        binding.inFlight.delete(processing);
      }
    }
  }

  /** Deserialize, run the handler to completion, then ack (or nack on failure). Never rejects. */
  protected async processMessage(binding: ConsumerBinding, message: ReceivedMessage): Promise<void> {
    const context = new PulsarContext([message, binding.consumer, binding.pattern]);
    let pattern: string;
    let data: unknown;
    try {
      const packet = await this.deserializer.deserialize(message, {
        pattern: binding.pattern,
        channel: message.topic,
      });
      pattern = packet.pattern == null ? binding.pattern : this.normalizePattern(packet.pattern);
      data = packet.data;
    } catch (err) {
      await this.handleUndecodable(binding, message, describe(err));
      return;
    }
    // The registered pattern itself is the common case: a direct lookup, because Nest's
    // getHandlerByPattern first tries JSON.parse on it, which throws for every topic name
    // (docs/benchmarks.md, "Measurements behind the code").
    const handler = this.messageHandlers.get(pattern) ?? this.getHandlerByPattern(pattern);
    if (!handler) {
      const policy = this.options.onMissingHandler ?? 'nack';
      this.reportError(
        `There is no matching event handler defined for pattern ${JSON.stringify(pattern)} ` +
          `(message ${message.messageId} on ${message.topic}); ${policy === 'ack' ? 'dropping' : 'negatively acknowledging'} it`,
        new Error(`No event handler for pattern ${JSON.stringify(pattern)}`),
      );
      await this.settle(binding, message, policy);
      return;
    }
    try {
      await this.invokeHandler(handler, data, context);
    } catch (err) {
      this.logger.warn(
        `Handler for ${JSON.stringify(pattern)} failed on message ${message.messageId} ` +
          `(delivery ${message.redeliveryCount + 1}); negatively acknowledging: ${describe(err)}`,
      );
      await this.settle(binding, message, 'nack');
      return;
    }
    await this.settle(binding, message, 'ack');
  }

  /**
   * Runs the handler inside Nest's processing hooks and resolves only once its result completed:
   * a promise resolved, an observable completed (values are ignored). Rejects when it failed.
   * (Nest's own `handleEvent` does not wait for observables, hence this.)
   */
  protected invokeHandler(handler: MessageHandler, data: unknown, context: PulsarContext): Promise<void> {
    const transportId = this.transportId ?? PULSAR_TRANSPORT;
    return new Promise<void>((resolve, reject) => {
      const run = async (): Promise<void> => {
        try {
          const result$ = this.transformToObservable(await handler(data, context));
          await lastValueFrom(result$, { defaultValue: undefined });
        } finally {
          this.onProcessingEndHook?.(transportId, context);
        }
      };
      try {
        const hooked = this.onProcessingStartHook(transportId, context, () => {
          const done = run();
          done.then(resolve, reject);
          return done;
        }) as unknown;
        Promise.resolve(hooked).catch(reject);
      } catch (err) {
        reject(err);
      }
    });
  }

  /**
   * A message the deserializer rejected: negatively acknowledged (it may be a passing failure of a
   * custom deserializer) until its last allowed delivery, then dead-lettered and acknowledged. A
   * dead letter that cannot be published leaves the message to be redelivered and tried again.
   */
  private async handleUndecodable(binding: ConsumerBinding, message: ReceivedMessage, error: string): Promise<void> {
    const deliveries = this.undecodable.countDelivery(message);
    if (deliveries < this.undecodable.maxDeliveries) {
      // Logged once, when dead-lettered; until then only at debug level.
      this.logger.debug?.(
        `Cannot decode message ${message.messageId} on ${binding.topic} (delivery ${deliveries} of ` +
          `${this.undecodable.maxDeliveries} before it is dead-lettered): ${excerpt(error)}`,
      );
      await this.settle(binding, message, 'nack');
      return;
    }
    try {
      await this.undecodable.deadLetter(binding.deadLetterTopic, message, error);
    } catch (err) {
      this.reportError(
        `Cannot dead-letter undecodable message ${message.messageId} on ${binding.topic} to ${binding.deadLetterTopic} ` +
          `(negatively acknowledging it; it is tried again when redelivered): ${describe(err)}`,
        err,
      );
      await this.settle(binding, message, 'nack');
      return;
    }
    this.logger.error(
      `Dead-lettered message ${message.messageId} on ${binding.topic} (subscription ${binding.subscription}) to ` +
        `${binding.deadLetterTopic} after ${deliveries} deliveries: cannot decode it: ${excerpt(error)}; ` +
        `payload (${message.payload.length} bytes): ${payloadExcerpt(message.payload)}`,
    );
    this.notify('deadLetter', {
      pattern: binding.pattern,
      topic: binding.topic,
      subscription: binding.subscription,
      messageId: message.messageId,
      deadLetterTopic: binding.deadLetterTopic,
      deliveries,
      reason: UNDECODABLE_REASON,
      error: excerpt(error),
    });
    await this.settle(binding, message, 'ack');
  }

  private async settle(binding: ConsumerBinding, message: ReceivedMessage, how: 'ack' | 'nack'): Promise<void> {
    try {
      if (how === 'ack') {
        await binding.consumer.acknowledge(message);
      } else {
        await binding.consumer.negativeAcknowledge(message);
      }
    } catch (err) {
      this.reportError(
        `${how === 'ack' ? 'Ack' : 'Negative ack'} of message ${message.messageId} on ${binding.topic} failed ` +
          `(the broker will redeliver it): ${describe(err)}`,
        err,
      );
    }
  }

  /**
   * Stops receiving, waits for running handlers to finish and settle their messages (at most
   * `closeTimeoutMs`), then closes the consumers and the client. Safe to call more than once.
   */
  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = this.doClose();
    }
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.stopping = true;
    // A start still subscribing finishes first (bounded by the client's operation timeouts), so
    // whatever it opened is closed below.
    await this.starting?.catch(() => undefined);
    this.starting = null;
    const bindings = this.bindings;
    const inFlight = bindings.flatMap((b) => [...b.inFlight]);
    let drained = true;
    if (inFlight.length > 0) {
      const timeoutMs = this.options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
      this.logger.log(`Closing: waiting for ${inFlight.length} in-flight handler(s)`);
      drained = await withTimeout(Promise.allSettled(inFlight).then(() => true), timeoutMs, false);
      if (!drained) {
        this.logger.warn(
          `Closing: handlers still running after ${timeoutMs} ms; closing anyway (their messages will be redelivered)`,
        );
      }
    }
    await Promise.allSettled(
      bindings.map((b) =>
        b.consumer.close().catch((err: unknown) => this.logger.warn(`Closing consumer of ${b.topic} failed: ${describe(err)}`)),
      ),
    );
    if (drained) {
      // Idle workers end once their receive() rejects on the closed consumer; bounded all the same.
      await withTimeout(Promise.allSettled(bindings.flatMap((b) => b.workers)), 5_000, undefined);
    }
    const client = this.client;
    this.bindings = [];
    this.client = null;
    this.undecodable.clear();
    if (client) {
      await client.close().catch((err: unknown) => this.logger.warn(`Closing Pulsar client failed: ${describe(err)}`));
    }
    this._status$.next('disconnected');
  }

  on<
    EventKey extends keyof PulsarServerEvents = keyof PulsarServerEvents,
    EventCallback extends PulsarServerEvents[EventKey] = PulsarServerEvents[EventKey],
  >(event: EventKey, callback: EventCallback): void {
    if (!(event in this.listeners)) {
      throw new Error(`ServerPulsar: unknown event "${String(event)}" (supported: ${Object.keys(this.listeners).join(', ')})`);
    }
    this.listeners[event].push(callback);
  }

  /** The {@link PulsarClient} (after `listen`). */
  unwrap<T = PulsarClient>(): T {
    if (!this.client) {
      throw new Error('Not initialized. Please call the "listen"/"startAllMicroservices" method before accessing the server.');
    }
    return this.client as T;
  }

  /** Consumers by pattern (after `listen`). */
  getConsumers(): ReadonlyMap<string, Consumer> {
    return new Map(this.bindings.map((b) => [b.pattern, b.consumer]));
  }

  private reportError(text: string, err: unknown): void {
    this.logger.error(text);
    this.notify('error', err);
  }

  private notify<K extends keyof PulsarServerEvents>(event: K, ...args: Parameters<PulsarServerEvents[K]>): void {
    for (const listener of this.listeners[event]) {
      try {
        (listener as (...a: Parameters<PulsarServerEvents[K]>) => void)(...args);
      } catch (listenerErr) {
        this.logger.error(`"${event}" listener threw: ${describe(listenerErr)}`);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    return err.message;
  }
  if (typeof err === 'object' && err !== null) {
    try {
      return JSON.stringify(err);
    } catch {
      return String(err);
    }
  }
  return String(err);
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
