import { redisTestContext } from '@timer/testing';
import { minuteOf } from '@timer/contracts';
import { RedisKeys, SLICE_STATE_TTL_MS, SliceIndex, SliceStore } from '../src';

describe('SliceStore against a real Redis', () => {
  const ctx = redisTestContext();
  const minute = minuteOf(Date.now()) + 10 * 60_000;

  it('marks a slice done and drops its index entries, leaving the other slices of the minute', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 4 });
    const store = new SliceStore(ctx.redis, ctx.prefix, index);
    // Timers 1 and 5 share bucket 1 of 4, timer 2 is in bucket 2.
    await index.add([
      { timerId: '1', runAt: minute + 1_000 },
      { timerId: '5', runAt: minute + 2_000 },
      { timerId: '2', runAt: minute + 1_000 },
    ]);
    expect(await ctx.redis.zcard(index.sliceKey(minute, 1))).toBe(2);

    await store.markDone(minute, 1);

    expect(await ctx.redis.exists(index.sliceKey(minute, 1))).toBe(0);
    expect(await index.due(minute, 2, minute, minute + 60_000)).toEqual([{ timerId: '2', runAt: minute + 1_000 }]);
    expect((await store.state([{ minute, buckets: 4 }]))[0].done).toEqual([false, true, false, false]);
    const ttl = await ctx.redis.pttl(new RedisKeys(ctx.prefix).sliceDone(minute, 1));
    expect(ttl).toBeGreaterThan(SLICE_STATE_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(SLICE_STATE_TTL_MS);
  });

  it('marks a slice done whose index was never written (or already dropped)', async () => {
    const store = new SliceStore(ctx.redis, ctx.prefix, new SliceIndex(ctx.redis, ctx.prefix));
    await store.markDone(minute, 3);
    await store.markDone(minute, 3);
    expect(await ctx.redis.exists(new RedisKeys(ctx.prefix).sliceDone(minute, 3))).toBe(1);
  });
});
