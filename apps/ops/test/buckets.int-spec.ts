import { minuteOf } from '@timer/contracts';
import { RedisKeys, SliceIndex, TriggerSlots } from '@timer/redis';
import { redisTestContext } from '@timer/testing';
import { BucketsService } from '../src/buckets.service';
import { formatBuckets, formatTriggers } from '../src/report.format';

describe('ops buckets against a real Redis', () => {
  const ctx = redisTestContext('ops');
  // Ahead of now: the slice index keeps keys until the minute's end + 24 h by Redis's clock.
  const minute = minuteOf(Date.now()) + 10 * 60_000;

  it('shows each minute\'s recorded count and slices done, and minutes nobody recorded', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { maxBuckets: 64 });
    await index.recordBuckets(new Map([[minute, 2_500], [minute + 60_000, 0]]));
    const keys = new RedisKeys(ctx.prefix);
    await ctx.redis.set(keys.sliceDone(minute, 3), '1', 'PX', 60_000);
    await ctx.redis.set(keys.sliceDone(minute, 21), '1', 'PX', 60_000);
    await ctx.redis.set(keys.sliceDoneAll(minute + 60_000), '1', 'PX', 60_000);
    const rows = await new BucketsService(ctx.redis, ctx.prefix).minutes(minute, 3);
    expect(rows).toEqual([
      { minute, buckets: 22, done: 2 },
      { minute: minute + 60_000, buckets: 10, done: 10 },
      { minute: minute + 120_000, buckets: null, done: null },
    ]);
    // Read-only: the minute nobody recorded is still unrecorded.
    expect(await ctx.redis.exists(keys.sliceBuckets(minute + 120_000))).toBe(0);
    const at = (m: number) => new Date(m).toISOString().slice(0, 16);
    expect(formatBuckets(rows).split('\n')).toEqual([
      'minute (UTC)           buckets  slices done',
      `${at(minute)}            22         2/22`,
      `${at(minute + 60_000)}            10        10/10`,
      `${at(minute + 120_000)}  not recorded            -`,
    ]);
  });

  it('shows the live triggers\' slots and the most buckets they allow a minute', async () => {
    const service = new BucketsService(ctx.redis, ctx.prefix);
    const now = Date.now();
    expect(formatTriggers(await service.triggers(now))).toBe('live triggers: none reported its slots lately: minutes keep the default count');
    const slots = new TriggerSlots(ctx.redis, ctx.prefix);
    for (const t of ['a', 'b', 'c']) await slots.report(t, 32, now);
    expect(await service.triggers(now)).toEqual({ processes: 3, slots: 96, largest: 32 });
    expect(formatTriggers(await service.triggers(now))).toMatch(/^live triggers: 3 \(96 slots\): a minute gets at most 21 buckets/);
  });
});
