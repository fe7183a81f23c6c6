import { PulsarConnectError, type WsPulsarClient } from '../src/index';
import { collect, newClient, sleep, uniqueTopic } from './pulsar-it';

describe('subscription types (real broker)', () => {
  let client: WsPulsarClient;

  beforeEach(() => {
    client = newClient();
  });

  afterEach(() => client.close());

  it('Shared spreads messages over two consumers: both get some, together all, none twice', async () => {
    const topic = uniqueTopic('shared');
    const a = await collect(client, { topic, subscription: 'pool', subscriptionType: 'Shared', receiverQueueSize: 10 });
    const b = await collect(client, { topic, subscription: 'pool', subscriptionType: 'Shared', receiverQueueSize: 10 });
    const producer = await client.createProducer({ topic });
    await Promise.all(Array.from({ length: 400 }, (_, i) => producer.send({ payload: `m${i}` })));

    const total = () => a.messages.length + b.messages.length;
    await a.until(() => total() >= 400, 30_000);
    await sleep(500); // a duplicate would show up now
    const all = [...a.payloads(), ...b.payloads()];
    expect(a.messages.length).toBeGreaterThan(0);
    expect(b.messages.length).toBeGreaterThan(0);
    expect(all).toHaveLength(400);
    expect(new Set(all)).toEqual(new Set(Array.from({ length: 400 }, (_, i) => `m${i}`)));
  }, 60_000);

  it('Key_Shared keeps every key on one consumer', async () => {
    const topic = uniqueTopic('keyshared');
    const a = await collect(client, { topic, subscription: 'k', subscriptionType: 'Key_Shared', receiverQueueSize: 10 });
    const b = await collect(client, { topic, subscription: 'k', subscriptionType: 'Key_Shared', receiverQueueSize: 10 });
    const producer = await client.createProducer({ topic });
    await Promise.all(Array.from({ length: 300 }, (_, i) => producer.send({ payload: `m${i}`, key: `key-${i % 30}` })));
    await a.until(() => a.messages.length + b.messages.length >= 300, 30_000);
    const keysOf = (c: typeof a) => new Set(c.messages.map((m) => m.message.key));
    const shared = [...keysOf(a)].filter((k) => keysOf(b).has(k));
    expect(shared).toEqual([]);
    expect(keysOf(a).size + keysOf(b).size).toBe(30);
    expect(a.messages.length + b.messages.length).toBe(300);
  }, 60_000);

  it('Failover delivers to one active consumer only', async () => {
    const topic = uniqueTopic('failover');
    const a = await collect(client, { topic, subscription: 'f', subscriptionType: 'Failover', consumerName: 'a' });
    const b = await collect(client, { topic, subscription: 'f', subscriptionType: 'Failover', consumerName: 'b' });
    const producer = await client.createProducer({ topic });
    await Promise.all(Array.from({ length: 50 }, (_, i) => producer.send({ payload: `m${i}` })));
    await a.until(() => a.messages.length + b.messages.length >= 50, 20_000);
    expect([a.messages.length, b.messages.length].sort((x, y) => x - y)).toEqual([0, 50]);
  }, 40_000);

  it('Exclusive refuses a second consumer with 409, and takes one again after the first closes', async () => {
    const topic = uniqueTopic('exclusive');
    const first = await client.subscribe({ topic, subscription: 'x', subscriptionType: 'Exclusive' });
    const error = await client.subscribe({ topic, subscription: 'x', subscriptionType: 'Exclusive' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PulsarConnectError);
    expect((error as PulsarConnectError).status).toBe(409);
    expect((error as Error).message).toMatch(/Exclusive consumer is already connected/);
    await first.close();
    const second = await client.subscribe({ topic, subscription: 'x', subscriptionType: 'Exclusive' });
    await second.close();
  }, 40_000);

  it('initialPosition Earliest reads what was published before the subscription existed', async () => {
    const topic = uniqueTopic('earliest');
    const producer = await client.createProducer({ topic });
    await producer.send({ payload: 'old' });
    const late = await client.subscribe({ topic, subscription: 'latest-sub', subscriptionType: 'Shared' });
    const early = await client.subscribe({ topic, subscription: 'early-sub', subscriptionType: 'Shared', initialPosition: 'Earliest' });
    await producer.send({ payload: 'new' });
    expect((await early.receive(10_000)).payload.toString()).toBe('old');
    expect((await early.receive(10_000)).payload.toString()).toBe('new');
    expect((await late.receive(10_000)).payload.toString()).toBe('new');
  }, 40_000);
});
