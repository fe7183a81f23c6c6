import { PulsarTimeoutError, type WsPulsarClient } from '../src/index';
import { isBatchedMessageId } from '../src/lib/ws-frames';
import { eventually, newAdmin, newClient, sleep, uniqueTopic } from './pulsar-it';

describe('ack, negative ack and redelivery (real broker)', () => {
  let client: WsPulsarClient;

  beforeEach(() => {
    client = newClient();
  });

  afterEach(() => client.close());

  it('acknowledged messages are gone: the backlog drains and a new consumer gets nothing', async () => {
    const topic = uniqueTopic('ack');
    const consumer = await client.subscribe({ topic, subscription: 'sub', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic });
    await Promise.all([0, 1, 2, 3, 4].map((i) => producer.send({ payload: `m${i}` })));
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const m = await consumer.receive(10_000);
      seen.push(m.payload.toString());
      await consumer.acknowledge(m);
    }
    expect(seen.sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    const stats = await eventually(() => newAdmin().topicStats(topic), (s) => s.subscriptions.sub.msgBacklog === 0, 10_000);
    expect(stats.subscriptions.sub.msgBacklog).toBe(0);
    await consumer.close();

    const again = await client.subscribe({ topic, subscription: 'sub', subscriptionType: 'Shared' });
    await expect(again.receive(2000)).rejects.toBeInstanceOf(PulsarTimeoutError);
  }, 40_000);

  it('tells batched message ids from plain ones, as the broker writes them', async () => {
    const topic = uniqueTopic('batch');
    const consumer = await client.subscribe({ topic, subscription: 'sub', subscriptionType: 'Shared' });
    const batching = await client.createProducer({ topic, batchingEnabled: true, batchingMaxPublishDelayMs: 20 });
    await Promise.all([0, 1, 2].map((i) => batching.send({ payload: `b${i}` })));
    const plain = await client.createProducer({ topic });
    await plain.send({ payload: 'p' });
    const kinds = new Map<string, boolean>();
    for (let i = 0; i < 4; i++) {
      const m = await consumer.receive(10_000);
      kinds.set(m.payload.toString(), isBatchedMessageId(m.messageId));
      await consumer.acknowledge(m);
    }
    expect(Object.fromEntries(kinds)).toEqual({ b0: true, b1: true, b2: true, p: false });
  }, 40_000);

  it('a negative ack redelivers after the configured delay, with redeliveryCount counting up', async () => {
    const topic = uniqueTopic('nack');
    const consumer = await client.subscribe({
      topic,
      subscription: 'sub',
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 500,
    });
    const producer = await client.createProducer({ topic });
    const id = await producer.send({ payload: 'retry-me', properties: { job: '7' } });

    const deliveries: Array<{ count: number; at: number }> = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const m = await consumer.receive(15_000);
      expect(m.messageId).toBe(id);
      expect(m.payload.toString()).toBe('retry-me');
      expect(m.properties).toEqual({ job: '7' });
      deliveries.push({ count: m.redeliveryCount, at: Date.now() });
      if (attempt < 2) await consumer.negativeAcknowledge(m);
      else await consumer.acknowledge(m);
    }
    expect(deliveries.map((d) => d.count)).toEqual([0, 1, 2]);
    // Redelivered no sooner than the delay (minus timer granularity).
    expect(deliveries[1].at - deliveries[0].at).toBeGreaterThanOrEqual(400);
    expect(deliveries[2].at - deliveries[1].at).toBeGreaterThanOrEqual(400);
    // Acked on the third delivery: no fourth.
    await expect(consumer.receive(2000)).rejects.toBeInstanceOf(PulsarTimeoutError);
  }, 60_000);

  it('an unacknowledged message is redelivered after the ack timeout', async () => {
    const topic = uniqueTopic('acktimeout');
    const consumer = await client.subscribe({ topic, subscription: 'sub', subscriptionType: 'Shared', ackTimeoutMs: 1000 });
    const producer = await client.createProducer({ topic });
    const id = await producer.send({ payload: 'forgotten' });
    const first = await consumer.receive(10_000);
    expect(first.messageId).toBe(id);
    const started = Date.now();
    const second = await consumer.receive(15_000);
    expect(second.messageId).toBe(id);
    expect(second.redeliveryCount).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    await consumer.acknowledge(second);
    await sleep(100);
  }, 40_000);
});
