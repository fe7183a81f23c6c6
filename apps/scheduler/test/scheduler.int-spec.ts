/**
 * SchedulerService against real Redis (DB 1, own key prefix) and Pulsar (tenant timer-test, a
 * namespace of its own): the published slice messages are consumed with WsPulsarClient.
 */
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { Registry } from 'prom-client';
import { SliceMessage, SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import { PulsarAdmin, ReceivedMessage, topicName, WsPulsarClient } from '@timer/pulsar';
import { ClientPulsar } from '@timer/pulsar-transport';
import { RedisKeys, RedisLock, SliceIndex, SliceStore } from '@timer/redis';
import { deleteKeys, deletePulsarNamespace, eventually, testEnv, uniqueId } from '@timer/testing';
import { SchedulerConfig, SchedulerEnv } from '../src/config/scheduler.env';
import { SchedulerMetrics } from '../src/scheduling/scheduler.metrics';
import { SchedulerService } from '../src/scheduling/scheduler.service';
import { PulsarSlicePublisher } from '../src/scheduling/slice.publisher';

jest.setTimeout(60_000);

const M = 60_000;
// Next year: the slice index expires bucket counts by Redis's real clock.
const T0 = Date.UTC(new Date().getUTCFullYear() + 1, 5, 1, 10, 0);

describe('scheduler against Redis and Pulsar', () => {
  const env = testEnv();
  const namespace = uniqueId('sched');
  const topic = topicName(env.pulsarTenant, namespace, TOPICS.slices);
  const admin = new PulsarAdmin({ serviceUrl: env.pulsarUrl });
  const consumerClient = new WsPulsarClient({ serviceUrl: env.pulsarUrl });
  const publisherClient = new ClientPulsar({ client: { serviceUrl: env.pulsarUrl }, tenant: env.pulsarTenant, namespace });
  const received: { message: SliceMessage; key?: string }[] = [];
  let redis: Redis;
  let prefix: string;
  const clients: Redis[] = [];

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    redis = new Redis(env.redisUrl, { maxRetriesPerRequest: 1 });
    await admin.ensureTenant(env.pulsarTenant);
    await admin.ensureNamespace(`${env.pulsarTenant}/${namespace}`);
    await admin.ensureTopic(topic);
    await consumerClient.subscribe({
      topic,
      subscription: SUBSCRIPTIONS.trigger,
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      listener: (m: ReceivedMessage, c) => {
        received.push({ message: JSON.parse(m.payload.toString('utf8')) as SliceMessage, key: m.key });
        void c.acknowledge(m).catch(() => undefined);
      },
    });
  });

  beforeEach(() => {
    prefix = `${uniqueId('sch')}:`;
    received.length = 0;
  });

  afterEach(() => deleteKeys(redis, prefix));

  afterAll(async () => {
    Logger.overrideLogger(['error', 'warn', 'log']);
    await publisherClient.close();
    await consumerClient.close();
    await Promise.all(clients.map((c) => c.quit()));
    await redis?.quit();
    await deletePulsarNamespace(env.pulsarUrl, `${env.pulsarTenant}/${namespace}`);
  });

  /** A scheduler "replica": its own Redis connection, lock, index; the shared publisher. */
  function scheduler(now: () => number, opts: Partial<SchedulerEnv> = {}, metrics = new SchedulerMetrics(new Registry())): SchedulerService {
    const client = new Redis(env.redisUrl, { maxRetriesPerRequest: 1 });
    clients.push(client);
    const config = new SchedulerConfig(Object.assign(new SchedulerEnv(), { TIMER_SCHEDULER_LOOKBACK_MINUTES: 2 }, opts));
    return new SchedulerService(
      new SliceStore(client, prefix, new SliceIndex(client, prefix)),
      new RedisLock(client, prefix),
      new PulsarSlicePublisher(publisherClient),
      { now },
      config,
      metrics,
    );
  }

  const ids = (ms: { message: SliceMessage }[]) => ms.map(({ message: m }) => `${(m.minute - T0) / M}:${m.bucket}`).sort();
  const all = (minutes: number[], buckets = 10) => minutes.flatMap((m) => Array.from({ length: buckets }, (_, b) => `${m}:${b}`)).sort();
  /** Waits until `n` messages arrived, then a little longer to catch any extra one. */
  async function receive(n: number): Promise<{ message: SliceMessage; key?: string }[]> {
    await eventually(`${n} slice messages (got ${received.length})`, async () => received.length >= n, 20_000);
    await new Promise((r) => setTimeout(r, 750));
    return [...received];
  }

  it('two schedulers in parallel offer each not-done slice exactly once per lease', async () => {
    const now = () => T0 + 5_000;
    // Unpaced (every past slice at once): exactly-once across replicas is what this checks.
    const a = scheduler(now, { TIMER_SCHEDULER_CATCHUP_SLICES: 100 });
    const b = scheduler(now, { TIMER_SCHEDULER_CATCHUP_SLICES: 100 });
    for (let i = 0; i < 3; i++) await Promise.all([a.tick(), b.tick()]);
    const got = await receive(30);
    expect(ids(got)).toEqual(all([-2, -1, 0]));
    for (const { message, key } of got) {
      expect(key).toBe(`${message.minute}:${message.bucket}`);
      expect(message.buckets).toBe(10);
      // The token is the one of the lock the offer holds: the trigger extends and releases with it.
      expect(await redis.get(`${prefix}lock:slice:${message.minute}:${message.bucket}`)).toBe(message.lockToken);
    }
    expect(await redis.get(`${prefix}slice-buckets:${T0 - 2 * M}`)).toBe('10');
  });

  it('never offers a done slice, and offers a not-done one again once its lease expired', async () => {
    const now = () => T0 + 5_000;
    for (let b = 0; b < 10; b++) if (b !== 4) await redis.set(new RedisKeys(prefix).sliceDone(T0 - M, b), '1', 'PX', 60_000);
    await redis.set(new RedisKeys(prefix).sliceDoneAll(T0 - 2 * M), '1', 'PX', 60_000);
    const s = scheduler(now, { TIMER_SLICE_LEASE_MS: 1500 });
    await s.tick();
    const first = await receive(11);
    expect(ids(first)).toEqual(['-1:4', ...all([0])].sort());
    received.length = 0;
    await s.tick(); // within the lease: nothing
    await new Promise((r) => setTimeout(r, 1700)); // the leases expire; none of the slices was marked done
    await redis.set(new RedisKeys(prefix).sliceDone(T0, 7), '1', 'PX', 60_000); // meanwhile one is finished
    await s.tick();
    const second = await receive(10);
    expect(ids(second)).toEqual(['-1:4', ...all([0]).filter((k) => k !== '0:7')].sort());
    const tokens = new Map(first.map(({ message: m }) => [`${m.minute}:${m.bucket}`, m.lockToken]));
    for (const { message: m } of second) expect(m.lockToken).not.toBe(tokens.get(`${m.minute}:${m.bucket}`));
  });

  it('offers an old (30-minute-old) slice nobody finished, after downtime', async () => {
    const now = T0 + 2_000;
    const old = T0 - 30 * M;
    const pipeline = redis.pipeline();
    for (let m = T0 - 60 * M; m <= T0; m += M) if (m !== old) pipeline.set(new RedisKeys(prefix).sliceDoneAll(m), '1', 'PX', 60_000);
    for (let b = 0; b < 10; b++) if (b !== 3) pipeline.set(new RedisKeys(prefix).sliceDone(old, b), '1', 'PX', 60_000);
    await pipeline.exec();
    const s = scheduler(() => now, { TIMER_SCHEDULER_LOOKBACK_MINUTES: 60 });
    const result = await s.tick();
    expect(result.offered.map((m) => [m.minute, m.bucket])).toEqual([[old, 3]]);
    const got = await receive(1);
    expect(got.map((g) => g.message)).toEqual([{ minute: old, bucket: 3, buckets: 10, lockToken: result.offered[0].lockToken }]);
  });

  it('offers one slice per recorded bucket: the migrator\'s count for a heavy minute, the default recorded for one nobody planned', async () => {
    // The migrator planned the current minute from 2,500 fires (10 + 2,500 / 200 = 22); nobody the next.
    expect(await new SliceIndex(redis, prefix, { maxBuckets: 64 }).recordBuckets(new Map([[T0, 2_500]]))).toEqual(new Map([[T0, 22]]));
    const keys = new RedisKeys(prefix);
    await redis.set(keys.sliceDoneAll(T0 - M), '1', 'PX', 60_000);
    const metrics = new SchedulerMetrics(new Registry());
    // 56 s into the minute: the next one is offered too (lead 5 s).
    await scheduler(() => T0 + 56_000, { TIMER_SCHEDULER_LOOKBACK_MINUTES: 1 }, metrics).tick();
    const got = await receive(32);
    expect(ids(got)).toEqual([...all([0], 22), ...all([1])].sort());
    for (const { message } of got) expect(message.buckets).toBe(message.minute === T0 ? 22 : 10);
    expect(await redis.get(keys.sliceBuckets(T0 + M))).toBe('10');
    expect((await metrics.minuteBuckets.get()).values[0]?.value).toBe(22);
  });
});
