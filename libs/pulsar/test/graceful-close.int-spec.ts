import { PulsarClosedError, PulsarTimeoutError, type WsPulsarClient } from '../src/index';
import { collect, newAdmin, newClient, sleep, uniqueTopic } from './pulsar-it';

describe('graceful close loses nothing (real broker)', () => {
  let client: WsPulsarClient;

  beforeEach(() => {
    client = newClient();
  });

  afterEach(() => client.close());

  it('producer close() returns only after every in-flight send is acknowledged; all of them arrive', async () => {
    const topic = uniqueTopic('close-producer');
    await newAdmin().ensureSubscription(topic, 'check', 'Earliest');
    const producer = await client.createProducer({ topic, maxPendingMessages: 100 });
    const acked = new Set<number>();
    const sends = Array.from({ length: 500 }, (_, i) => producer.send({ payload: `m${i}` }).then(() => acked.add(i)));
    await producer.close();
    expect(acked.size).toBe(500);
    await Promise.all(sends);
    await expect(producer.send({ payload: 'late' })).rejects.toBeInstanceOf(PulsarClosedError);

    const collector = await collect(client, { topic, subscription: 'check', subscriptionType: 'Shared' });
    await collector.until((c) => c.messages.length >= 500, 20_000);
    await sleep(300);
    expect(new Set(collector.payloads())).toEqual(new Set(Array.from({ length: 500 }, (_, i) => `m${i}`)));
    expect(collector.messages).toHaveLength(500);
  }, 60_000);

  it('consumer close() with unacknowledged messages: they are redelivered to the next consumer, acked ones are not', async () => {
    const topic = uniqueTopic('close-consumer');
    const first = await client.subscribe({ topic, subscription: 'sub', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic });
    await Promise.all(Array.from({ length: 20 }, (_, i) => producer.send({ payload: `m${i}` })));
    const acked: string[] = [];
    const unacked: string[] = [];
    for (let i = 0; i < 20; i++) {
      const m = await first.receive(10_000);
      if (i % 2 === 0) {
        await first.acknowledge(m);
        acked.push(m.payload.toString());
      } else {
        unacked.push(m.payload.toString());
      }
    }
    const pendingReceive = first.receive().catch((e: unknown) => e);
    await first.close();
    expect(await pendingReceive).toBeInstanceOf(PulsarClosedError);

    const second = await client.subscribe({ topic, subscription: 'sub', subscriptionType: 'Shared' });
    const redelivered: string[] = [];
    for (let i = 0; i < unacked.length; i++) {
      const m = await second.receive(15_000);
      expect(m.redeliveryCount).toBeGreaterThanOrEqual(0);
      redelivered.push(m.payload.toString());
      await second.acknowledge(m);
    }
    expect(redelivered.sort()).toEqual([...unacked].sort());
    await expect(second.receive(2000)).rejects.toBeInstanceOf(PulsarTimeoutError);
    expect(acked).toHaveLength(10);
  }, 60_000);
});
