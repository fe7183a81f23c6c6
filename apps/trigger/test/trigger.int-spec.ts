/**
 * The trigger against the real MariaDB, Redis and Pulsar: the test plays the scheduler (slice lock +
 * SliceMessage on `timer-slices`) and the executor (a consumer of `timer-tasks`).
 */
import { LOCK_RESOURCES, RedisKeys } from '@timer/redis';
import { eventually } from '@timer/testing';
import { fireIdOf, TriggerHarness } from './trigger-harness';
import { FireRef, minuteOf } from '@timer/contracts';

jest.setTimeout(120_000);

const MINUTE = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('trigger (real MariaDB, Redis, Pulsar)', () => {
  const h = new TriggerHarness();
  const now = Date.now();
  // Distinct past minutes per test (recent enough for the index's retention).
  const past = (n: number) => minuteOf(now) - n * MINUTE;

  beforeAll(async () => {
    await h.start();
  });
  afterAll(async () => {
    await h.stop();
  });

  /** Waits for `expected` messages of the minute, then a little longer to catch any extra one. */
  async function receiveExactly(minute: number, expected: string[]): Promise<void> {
    await eventually(`${expected.length} task messages of ${new Date(minute).toISOString()}`, async () => h.receivedIn(minute).length >= expected.length, 20_000);
    await sleep(1_000);
    const got = h.receivedIn(minute).map((r) => r.task.fireId);
    expect(got.sort()).toEqual([...expected].sort()); // each exactly once
  }

  it('publishes every fire of a past slice once (index and MySQL-only fires), marks it done and releases the lock', async () => {
    const minute = past(10);
    const bucket = 1;
    const inIndex: FireRef[] = [
      { timerId: '1', runAt: minute + 0 },
      { timerId: '5', runAt: minute + 12_345 },
      { timerId: '9', runAt: minute + 59_999 },
    ];
    const onlyInMysql: FireRef[] = [
      { timerId: '13', runAt: minute + 7_000 },
      { timerId: '17', runAt: minute + 42_000 },
    ];
    const otherBucket: FireRef[] = [{ timerId: '2', runAt: minute + 1_000 }];
    const settled: FireRef[] = [{ timerId: '21', runAt: minute + 3_000 }];
    await h.insertRows([...inIndex, ...onlyInMysql, ...otherBucket]);
    await h.insertRows(settled, 2);
    await h.index.add([...inIndex, ...otherBucket]);
    expect(await h.index.buckets(minute)).toBe(4);

    const slice = await h.offer(minute, bucket);
    await h.publishSlice(slice);
    await eventually('the done marker', async () => (await h.redis.exists(new RedisKeys(h.prefix).sliceDone(minute, bucket))) === 1, 30_000);

    await receiveExactly(minute, [...inIndex, ...onlyInMysql].map(fireIdOf));
    for (const r of h.receivedIn(minute)) {
      if (r.fires === 1) {
        expect(r.key).toBe(r.task.timerId);
        expect(r.properties['x-timer-fire-id']).toBe(r.task.fireId);
      } else {
        expect(r.properties['x-timer-fires']).toBe(String(r.fires));
      }
      expect(r.task).toEqual({ timerId: r.task.timerId, runAt: r.task.runAt, fireId: `${r.task.timerId}-${r.task.runAt}`, attempt: 1 });
    }
    expect(await h.redis.exists(new RedisKeys(h.prefix).lock(LOCK_RESOURCES.slice(minute, bucket)))).toBe(0);
    expect(await h.redis.get(new RedisKeys(h.prefix).sliceCursor(minute, bucket))).toBe(String(minute + MINUTE));
    const ttl = await h.redis.pttl(new RedisKeys(h.prefix).sliceDone(minute, bucket));
    expect(ttl).toBeGreaterThan(47 * 3_600_000);
  });

  it("publishes a step's fires as one message of many (x-timer-fires), each fire once", async () => {
    const minute = past(11);
    const bucket = 3;
    const fires: FireRef[] = [0, 10, 20, 30, 40].map((o, i) => ({ timerId: String(3 + 4 * i), runAt: minute + 1_000 + o }));
    await h.insertRows(fires);
    await h.index.add(fires);
    await h.publishSlice(await h.offer(minute, bucket));
    await eventually('the done marker', async () => (await h.redis.exists(new RedisKeys(h.prefix).sliceDone(minute, bucket))) === 1, 30_000);
    await receiveExactly(minute, fires.map(fireIdOf));
    const got = h.receivedIn(minute);
    expect(got.map((r) => r.fires)).toEqual([5, 5, 5, 5, 5]);
    expect(new Set(got.map((r) => r.receivedAt)).size).toBe(1); // one message
    expect(got[0].properties['x-timer-fires']).toBe('5');
    expect([got[0].properties['x-timer-first-fire-id'], got[0].properties['x-timer-last-fire-id']]).toEqual([fireIdOf(fires[0]), fireIdOf(fires[4])]);
  });

  it('resumes a redelivered slice from its cursor: only the rest of the minute is published', async () => {
    const minute = past(9);
    const bucket = 2;
    const fires: FireRef[] = [10_000, 20_000, 29_999, 30_000, 40_000, 50_000].map((o, i) => ({ timerId: String(2 + 4 * (i + 1)), runAt: minute + o }));
    await h.insertRows(fires);
    await h.index.add(fires);
    await h.redis.set(new RedisKeys(h.prefix).sliceCursor(minute, bucket), String(minute + 30_000));

    await h.publishSlice(await h.offer(minute, bucket));
    await eventually('the done marker', async () => (await h.redis.exists(new RedisKeys(h.prefix).sliceDone(minute, bucket))) === 1, 30_000);
    await receiveExactly(minute, fires.filter((f) => f.runAt >= minute + 30_000).map(fireIdOf));
  });

  it('stops without publishing or marking done when the slice lock carries a newer token', async () => {
    const minute = past(8);
    const bucket = 3;
    const fires: FireRef[] = [{ timerId: '3', runAt: minute + 5_000 }];
    await h.insertRows(fires);
    await h.index.add(fires);
    const stale = await h.offer(minute, bucket);
    // The lease expired and the scheduler re-offered the slice with a new token.
    const lockKey = new RedisKeys(h.prefix).lock(LOCK_RESOURCES.slice(minute, bucket));
    await h.redis.set(lockKey, 'newer-offer', 'PX', 30_000);
    const before = await h.sliceCount('superseded');

    await h.publishSlice(stale);
    await eventually('the superseded outcome', async () => (await h.sliceCount('superseded')) > before, 20_000);
    await sleep(1_000);
    expect(h.receivedIn(minute)).toHaveLength(0);
    expect(await h.redis.exists(new RedisKeys(h.prefix).sliceDone(minute, bucket))).toBe(0);
    expect(await h.redis.get(lockKey)).toBe('newer-offer');
  });

  it('publishes every pending row when the index is gone (FLUSHALL-like), taking back the freed lock', async () => {
    const minute = past(7);
    const bucket = 0;
    const rows: FireRef[] = Array.from({ length: 40 }, (_, i) => ({ timerId: String(100 + 4 * i), runAt: minute + i * 1_500 + 3 }));
    await h.insertRows(rows);
    // No index keys, no bucket count and no lock: Redis lost everything after the scheduler's offer.
    expect(await h.redis.exists(h.index.sliceKey(minute, bucket), h.index.bucketsKey(minute))).toBe(0);
    await h.publishSlice({ minute, bucket, buckets: 4, lockToken: 'offer-before-the-flush' });
    await eventually('the done marker', async () => (await h.redis.exists(new RedisKeys(h.prefix).sliceDone(minute, bucket))) === 1, 30_000);
    await receiveExactly(minute, rows.map(fireIdOf));
  });

  it('publishes a live slice ahead of each run_at, then stops at shutdown with its cursor saved and the message nacked', async () => {
    const t0 = Date.now();
    // Fires a few seconds ahead in one minute; the slice is offered before them (in the next minute
    // when this one is nearly over: the trigger then waits for its steps).
    const minute = t0 % MINUTE > 45_000 ? minuteOf(t0) + MINUTE : minuteOf(t0);
    const bucket = 1;
    const first = Math.max(t0 + 2_500, minute + 1_000);
    const fires: FireRef[] = Array.from({ length: 10 }, (_, i) => ({ timerId: String(1_001 + 4 * i), runAt: first + i * 300 }));
    expect(fires.at(-1)!.runAt).toBeLessThan(minute + 50_000);
    await h.insertRows(fires);
    await h.index.add(fires);
    await h.publishSlice(await h.offer(minute, bucket));

    await eventually('the live fires', async () => h.receivedIn(minute).length >= fires.length, fires.at(-1)!.runAt - Date.now() + 10_000);
    const lateness = h.receivedIn(minute).map((r) => r.receivedAt - r.task.runAt);
    // Published lead (500 ms) before their step: normally received well before run_at. On this shared
    // 2-core machine allow up to 1 s after run_at, never more.
    expect(Math.max(...lateness)).toBeLessThanOrEqual(1_000);
    process.stdout.write(`live slice: receive time - run_at per fire (ms): ${lateness.join(', ')}\n`);

    const stoppedBefore = await h.sliceCount('stopped');
    const closing = Date.now();
    await h.closeApp();
    const closeMs = Date.now() - closing;
    expect(await h.sliceCount('stopped')).toBe(stoppedBefore + 1);
    const cursor = Number(await h.redis.get(new RedisKeys(h.prefix).sliceCursor(minute, bucket)));
    expect(cursor).toBeGreaterThan(fires.at(-1)!.runAt);
    expect(cursor).toBeLessThan(minute + MINUTE);
    expect(await h.redis.exists(new RedisKeys(h.prefix).sliceDone(minute, bucket))).toBe(0);
    process.stdout.write(`live slice: app closed in ${closeMs} ms, cursor at +${cursor - minute} ms\n`);
  });
});
