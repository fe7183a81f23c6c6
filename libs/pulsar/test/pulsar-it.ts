/**
 * Shared helpers of the integration tests: they run against the real broker at TIMER_PULSAR_URL
 * (default http://127.0.0.1:8080), each on topics of its own.
 */
import { randomBytes } from 'node:crypto';
import {
  PulsarAdmin,
  WsPulsarClient,
  type Consumer,
  type ConsumerOptions,
  type PulsarClientOptions,
  type ReceivedMessage,
} from '../src/index';

export const PULSAR_URL = process.env.TIMER_PULSAR_URL || 'http://127.0.0.1:8080';

export function uniqueTopic(prefix: string): string {
  return `persistent://public/default/it-${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export function newClient(options: Partial<PulsarClientOptions> = {}): WsPulsarClient {
  return new WsPulsarClient({ serviceUrl: PULSAR_URL, reconnectInitialDelayMs: 100, reconnectMaxDelayMs: 2000, ...options });
}

export function newAdmin(): PulsarAdmin {
  return new PulsarAdmin({ serviceUrl: PULSAR_URL });
}

/** A listener-driven consumer that records what it receives, with the local arrival time. */
export interface Collector {
  consumer: Consumer;
  messages: Array<{ message: ReceivedMessage; at: number }>;
  payloads(): string[];
  /** Resolves once `predicate` holds; rejects after `timeoutMs` with what arrived so far. */
  until(predicate: (c: Collector) => boolean, timeoutMs: number): Promise<void>;
}

export async function collect(
  client: WsPulsarClient,
  options: Omit<ConsumerOptions, 'listener'>,
  // An ack can reject only when the consumer closes first: the broker then redelivers anyway.
  onMessage: (message: ReceivedMessage, consumer: Consumer) => void = (m, c) => void c.acknowledge(m).catch(() => undefined),
): Promise<Collector> {
  const messages: Collector['messages'] = [];
  const collector: Collector = {
    consumer: undefined as unknown as Consumer,
    messages,
    payloads: () => messages.map((m) => m.message.payload.toString('utf8')),
    until: async (predicate, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(collector)) {
        if (Date.now() > deadline) {
          throw new Error(`timed out after ${timeoutMs} ms; received ${messages.length}: ${collector.payloads().slice(0, 20).join(',')}`);
        }
        await sleep(20);
      }
    },
  };
  collector.consumer = await client.subscribe({
    ...options,
    listener: (message, consumer) => {
      messages.push({ message, at: Date.now() });
      onMessage(message, consumer);
    },
  });
  return collector;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `predicate` accepts its value; returns the last value either way. */
export async function eventually<T>(read: () => Promise<T>, predicate: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!predicate(value) && Date.now() < deadline) {
    await sleep(200);
    value = await read();
  }
  return value;
}
