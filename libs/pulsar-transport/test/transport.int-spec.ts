/**
 * ServerPulsar + ClientPulsar against the real broker (TIMER_PULSAR_URL, default
 * http://127.0.0.1:8080) through the real WsPulsarClient / PulsarAdmin of `@timer/pulsar`.
 * Every run uses its own topics in public/default (`it-transport-<run>-*`) and deletes them after.
 */
import { Controller, INestMicroservice, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { randomBytes } from 'crypto';
import { lastValueFrom } from 'rxjs';
import { MESSAGE_PROPERTIES } from '@timer/contracts';
import { messageIdPosition, WsPulsarClient } from '@timer/pulsar';
import { ClientPulsar, PulsarContext, PulsarDeadLetter, PulsarRecordBuilder, ServerPulsar } from '../src';

jest.setTimeout(60_000);

const SERVICE_URL = process.env.TIMER_PULSAR_URL || 'http://127.0.0.1:8080';
const RUN = `it-transport-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
const EVENTS = `${RUN}-events`;
const RETRY = `${RUN}-retry`;
const SLOW = `${RUN}-slow`;
const GARBAGE = `${RUN}-garbage`;
const UNDECODABLE = `${RUN}-undecodable`;
const SUBSCRIPTION = 'it-transport';
const N = 50;

interface Seen {
  n: number;
  messageId: string;
  key?: string;
  properties: Record<string, string>;
  redeliveryCount: number;
  topic: string;
  publishTime: number;
}

const seen: Seen[] = [];
const retrySeen: number[] = [];
const slow = { started: 0, finished: 0 };
const garbageHandled: unknown[] = [];
const deadLetters: PulsarDeadLetter[] = [];

@Controller()
class ItController {
  @EventPattern(EVENTS)
  async onEvent(@Payload() data: { n: number }, @Ctx() ctx: PulsarContext): Promise<void> {
    await new Promise((r) => setTimeout(r, 5));
    seen.push({
      n: data.n,
      messageId: ctx.getMessageId(),
      key: ctx.getKey(),
      properties: ctx.getProperties(),
      redeliveryCount: ctx.getRedeliveryCount(),
      topic: ctx.getTopic(),
      publishTime: ctx.getPublishTime(),
    });
  }

  @EventPattern(RETRY)
  async onRetry(@Payload() _data: unknown, @Ctx() ctx: PulsarContext): Promise<void> {
    retrySeen.push(ctx.getRedeliveryCount());
    if (ctx.getRedeliveryCount() === 0) {
      throw new Error('fails on first delivery (expected by the test)');
    }
  }

  @EventPattern(GARBAGE)
  async onGarbage(@Payload() data: unknown): Promise<void> {
    garbageHandled.push(data);
  }

  @EventPattern(SLOW)
  async onSlow(): Promise<void> {
    slow.started++;
    await new Promise((r) => setTimeout(r, 1_500));
    slow.finished++;
  }
}

@Module({ controllers: [ItController] })
class ItModule {}

function topicPath(local: string): string {
  return `${SERVICE_URL}/admin/v2/persistent/public/default/${encodeURIComponent(local)}`;
}

async function backlog(local: string): Promise<number> {
  const res = await fetch(`${topicPath(local)}/stats`, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) {
    throw new Error(`stats of ${local}: HTTP ${res.status} ${await res.text()}`);
  }
  const stats = (await res.json()) as { subscriptions: Record<string, { msgBacklog: number }> };
  const sub = stats.subscriptions[SUBSCRIPTION];
  if (!sub) {
    throw new Error(`subscription ${SUBSCRIPTION} missing on ${local}: ${Object.keys(stats.subscriptions).join(', ')}`);
  }
  return sub.msgBacklog;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Pulsar transport against the broker', () => {
  let app: INestMicroservice | undefined;
  let client: ClientPulsar | undefined;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    const server = new ServerPulsar({
      client: { serviceUrl: SERVICE_URL, connectTimeoutMs: 5_000, sendTimeoutMs: 10_000 },
      consumer: { subscription: SUBSCRIPTION, negativeAckRedeliveryDelayMs: 300, receiverQueueSize: 20 },
      closeTimeoutMs: 10_000,
      undecodable: { deadLetterTopic: UNDECODABLE, initialSubscription: 'it-undecodable' },
    });
    server.on('deadLetter', (d) => deadLetters.push(d));
    app = await NestFactory.createMicroservice(ItModule, { strategy: server, logger: ['error'] });
    await app.listen();
    client = new ClientPulsar({ client: { serviceUrl: SERVICE_URL, connectTimeoutMs: 5_000, sendTimeoutMs: 10_000 } });
  });

  afterAll(async () => {
    await client?.close();
    await app?.close();
    Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']);
    await Promise.allSettled(
      [EVENTS, RETRY, SLOW, GARBAGE, UNDECODABLE].map((t) =>
        fetch(`${topicPath(t)}?force=true`, { method: 'DELETE', signal: AbortSignal.timeout(5_000) }),
      ),
    );
  });

  it(`handles each of ${N} emitted events exactly once, with key and properties, and acks them`, async () => {
    const ids = await Promise.all(
      Array.from({ length: N }, (_, n) =>
        lastValueFrom(
          client!.emit(EVENTS, new PulsarRecordBuilder({ n }).setKey(`k${n % 5}`).setProperty('n', String(n)).build()),
        ),
      ),
    );
    expect(new Set(ids).size).toBe(N);
    await until(`${N} events handled`, () => seen.length >= N);
    await until('backlog 0', async () => (await backlog(EVENTS)) === 0);
    // a redelivery would show up here
    await new Promise((r) => setTimeout(r, 1_000));
    expect(seen).toHaveLength(N);
    expect(seen.map((s) => s.n).sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, n) => n));
    expect(new Set(seen.map((s) => s.messageId)).size).toBe(N);
    for (const s of seen) {
      expect(s.key).toBe(`k${s.n % 5}`);
      expect(s.properties).toEqual(expect.objectContaining({ n: String(s.n) }));
      expect(s.redeliveryCount).toBe(0);
      expect(s.topic).toBe(`persistent://public/default/${EVENTS}`);
      expect(Math.abs(Date.now() - s.publishTime)).toBeLessThan(60_000);
    }
    expect(await backlog(EVENTS)).toBe(0);
  });

  it('redelivers an event whose handler failed, then acks it', async () => {
    await lastValueFrom(client!.emit(RETRY, { once: true }));
    await until('redelivery handled', () => retrySeen.length >= 2);
    await until('backlog 0', async () => (await backlog(RETRY)) === 0);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(retrySeen).toEqual([0, 1]);
    expect(await backlog(RETRY)).toBe(0);
  });

  it('dead-letters a message that is not JSON after 3 deliveries, acks it, and never hands it to the handler', async () => {
    const garbage = Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x7b, 0x22, 0x00, 0xff]);
    const id = await lastValueFrom(client!.emit(GARBAGE, new PulsarRecordBuilder(garbage).setKey('g1').setProperty('origin', 'it').build()));
    const reader = new WsPulsarClient({ serviceUrl: SERVICE_URL });
    try {
      // Provisioned by the server at listen (initialSubscription), so the broker kept it.
      const dlq = await reader.subscribe({ topic: `persistent://public/default/${UNDECODABLE}`, subscription: 'it-undecodable', subscriptionType: 'Exclusive' });
      const dead = await dlq.receive(20_000);
      await dlq.acknowledge(dead);
      expect(Buffer.compare(dead.payload, garbage)).toBe(0);
      expect(dead.key).toBe('g1');
      expect(dead.properties).toEqual({
        origin: 'it',
        REAL_TOPIC: `persistent://public/default/${GARBAGE}`,
        ORIGIN_MESSAGE_ID: expect.any(String),
        [MESSAGE_PROPERTIES.reason]: 'undecodable',
        [MESSAGE_PROPERTIES.error]: 'payload is not UTF-8 (8 bytes)',
      });
      expect(messageIdPosition(dead.properties.ORIGIN_MESSAGE_ID)).toEqual(messageIdPosition(id));
      await until('backlog 0', async () => (await backlog(GARBAGE)) === 0);
      // Not redelivered again: no second dead letter, the source backlog stays empty.
      await expect(dlq.receive(2_000)).rejects.toThrow();
      expect(await backlog(GARBAGE)).toBe(0);
      expect(garbageHandled).toEqual([]);
      expect(deadLetters).toEqual([expect.objectContaining({ topic: `persistent://public/default/${GARBAGE}`, deliveries: 3, reason: 'undecodable' })]);
    } finally {
      await reader.close();
    }
  });

  it('close() waits for in-flight handlers, which ack before the consumers close', async () => {
    await lastValueFrom(client!.emit(SLOW, 1));
    await lastValueFrom(client!.emit(SLOW, 2));
    await until('slow handlers started', () => slow.started === 2);
    expect(slow.finished).toBe(0);
    const t0 = Date.now();
    await app!.close();
    app = undefined;
    expect(slow.finished).toBe(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(500);
    await until('backlog 0', async () => (await backlog(SLOW)) === 0, 10_000);
  });
});
