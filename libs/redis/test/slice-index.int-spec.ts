import { redisTestContext } from '@timer/testing';
import { SliceIndex } from '../src';
import { FireRef, minuteOf } from '@timer/contracts';

describe('SliceIndex against a real Redis', () => {
  const ctx = redisTestContext();
  // A fixed minute in the future relative to the retention check below (keys must not expire at once).
  const minute = minuteOf(Date.now()) + 10 * 60_000;
  const at = (second: number) => minute + second * 1000;


  it('floors to the minute and buckets by BigInt(timerId) % buckets', () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix);
    expect(minuteOf(Date.UTC(2026, 0, 1, 10, 5, 59, 999))).toBe(Date.UTC(2026, 0, 1, 10, 5));
    expect(minuteOf(Date.UTC(2026, 0, 1, 10, 5))).toBe(Date.UTC(2026, 0, 1, 10, 5));
    expect(index.bucketOf('42', 10)).toBe(2);
    expect(index.bucketOf('18446744073709551615', 10)).toBe(5); // beyond 2^53: exact
    expect(() => index.bucketOf('4x', 10)).toThrow(RangeError);
  });

  it('leaves out fires past the retention instead of failing, and answers the default count for them', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 4, retentionMs: 60_000 });
    const old = minuteOf(Date.now()) - 10 * 60_000;
    await expect(index.add([{ timerId: '1', runAt: old + 1_000 }, { timerId: '1', runAt: at(1) }])).resolves.toBeUndefined();
    expect(await ctx.redis.exists(index.sliceKey(old, 1))).toBe(0);
    expect(await ctx.redis.exists(index.bucketsKey(old))).toBe(0);
    expect(await ctx.redis.zrange(index.sliceKey(minute, 1), 0, -1)).toEqual([`1-${at(1)}`]);
    expect(await index.buckets(old)).toBe(4);
  });

  it('adds idempotently with the documented key layout and member format', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 4 });
    const fires: FireRef[] = [
      { timerId: '5', runAt: at(1) },
      { timerId: '5', runAt: at(30) },
      { timerId: '6', runAt: at(2) },
    ];
    await index.add(fires);
    await index.add(fires);
    await index.add([fires[0]]);
    expect(await ctx.redis.zrange(`${ctx.prefix}slice:${minute}:1`, 0, -1, 'WITHSCORES')).toEqual([`5-${at(1)}`, String(at(1)), `5-${at(30)}`, String(at(30))]);
    expect(await ctx.redis.zrange(`${ctx.prefix}slice:${minute}:2`, 0, -1)).toEqual([`6-${at(2)}`]);
    expect(await ctx.redis.get(`${ctx.prefix}slice-buckets:${minute}`)).toBe('4');
    expect((await ctx.redis.keys(`${ctx.prefix}*`)).sort()).toEqual([`${ctx.prefix}slice-buckets:${minute}`, `${ctx.prefix}slice:${minute}:1`, `${ctx.prefix}slice:${minute}:2`].sort());
  });

  it('sets the expiry of slices and bucket counts to the minute end + retention', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { retentionMs: 3_600_000 });
    await index.add([{ timerId: '7', runAt: at(5) }]);
    const expected = minute + 60_000 + 3_600_000;
    for (const key of [`${ctx.prefix}slice:${minute}:7`, `${ctx.prefix}slice-buckets:${minute}`]) {
      const pexpiretime = Number(await ctx.redis.call('pexpiretime', key));
      expect(pexpiretime).toBe(expected);
    }
  });

  it('records a minute bucket count once; two instances with other defaults agree', async () => {
    const a = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 3 });
    const b = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 20 });
    const [ca, cb] = await Promise.all([a.buckets(minute), b.buckets(minute)]);
    expect(ca).toBe(cb);
    expect([3, 20]).toContain(ca);
    expect(await new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 50 }).buckets(minute)).toBe(ca);
    // Another minute is recorded independently.
    expect(await b.recordedBuckets(minute + 60_000)).toBeNull();
    expect(await b.buckets(minute + 60_000)).toBe(20);
    // A fire added through b lands in the bucket a computes too.
    await b.add([{ timerId: '11', runAt: at(3) }]);
    expect(await a.due(minute, a.bucketOf('11', ca), minute, minute + 60_000)).toEqual([{ timerId: '11', runAt: at(3) }]);
  });

  it('records a heavy minute\'s bucket count from its fires, a light one the default; all fires are found walking every bucket', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { maxBuckets: 64 }); // 10 + 1 per 200 fires, at most 64
    const next = minute + 60_000;
    expect(await index.recordBuckets(new Map([[minute, 2_500], [next, 3]]))).toEqual(new Map([[minute, 22], [next, 10]]));
    expect(await ctx.redis.get(index.bucketsKey(minute))).toBe('22');
    const heavy = Array.from({ length: 2_500 }, (_, i) => ({ timerId: String(1_000 + i), runAt: at(i % 60) }));
    const light = [1, 2, 3].map((i) => ({ timerId: String(i), runAt: next + i * 1_000 }));
    await index.add([...heavy, ...light]);
    // Walking every bucket of each minute's count finds every fire, each once, and the heavy one uses them all.
    const walk = async (m: number, buckets: number) => (await Promise.all(Array.from({ length: buckets }, (_, b) => index.due(m, b, m, m + 60_000)))).map((fires) => fires.map((f) => `${f.timerId}-${f.runAt}`));
    const heavyWalk = await walk(minute, 22);
    expect(heavyWalk.flat().sort()).toEqual(heavy.map((f) => `${f.timerId}-${f.runAt}`).sort());
    expect(heavyWalk.every((fires) => fires.length > 0)).toBe(true);
    expect((await walk(next, 10)).flat().sort()).toEqual(light.map((f) => `${f.timerId}-${f.runAt}`).sort());
    expect(await ctx.redis.keys(`${ctx.prefix}slice:${minute}:*`)).toHaveLength(22);
    // Any other instance (any default) reads the recorded count.
    expect(await new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 3 }).buckets(minute)).toBe(22);
  });

  it('never changes a recorded count: a later record, or the migrator after a first user, keeps it', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { maxBuckets: 64 });
    const next = minute + 60_000;
    await index.recordBuckets(new Map([[minute, 1_000]]));
    // Another process (no cache) records again with other counts: the first count stays.
    const other = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 2, bucketFires: 10, maxBuckets: 1_000 });
    expect(await other.recordBuckets(new Map([[minute, 50_000]]))).toEqual(new Map([[minute, 15]]));
    // A minute first used by the api or the scheduler has the default; the migrator's count comes too late.
    await other.add([{ timerId: '5', runAt: next + 1_000 }]);
    expect(await index.recordBuckets(new Map([[next, 50_000]]))).toEqual(new Map([[next, 2]]));
    expect(await index.due(next, index.bucketOf('5', 2), next, next + 60_000)).toEqual([{ timerId: '5', runAt: next + 1_000 }]);
    expect(await ctx.redis.get(index.bucketsKey(minute))).toBe('15');
    // A minute past its retention records nothing.
    const old = minuteOf(Date.now()) - 3 * 24 * 3_600_000;
    expect(await index.recordBuckets(new Map([[old, 5_000]]))).toEqual(new Map());
    expect(await ctx.redis.exists(index.bucketsKey(old))).toBe(0);
  });

  it('due() returns [from, to) in runAt order', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 1 });
    await index.add([30, 10, 20, 0, 59].map((s) => ({ timerId: '9', runAt: at(s) })).concat([{ timerId: '12', runAt: at(10) }]));
    expect(await index.due(minute, 0, at(10), at(30))).toEqual([
      { timerId: '12', runAt: at(10) },
      { timerId: '9', runAt: at(10) },
      { timerId: '9', runAt: at(20) },
    ]);
    expect((await index.due(minute, 0, minute, minute + 60_000)).map((f) => f.runAt)).toEqual([0, 10, 10, 20, 30, 59].map(at));
    expect(await index.due(minute, 0, at(31), at(59))).toEqual([]);
    expect(await index.due(minute, 0, at(30), at(30))).toEqual([]);
    expect(await index.due(minute + 60_000, 0, minute + 60_000, minute + 120_000)).toEqual([]);
  });

  it('remove() drops exactly the given fires', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 2 });
    const fires = [1, 2, 3].map((s) => ({ timerId: '4', runAt: at(s) }));
    await index.add(fires);
    await index.remove([fires[1], { timerId: '4', runAt: at(4) }]);
    expect(await index.due(minute, 0, minute, minute + 60_000)).toEqual([fires[0], fires[2]]);
    // Removing in a minute that was never indexed neither fails nor records a bucket count.
    await index.remove([{ timerId: '4', runAt: minute + 5 * 60_000 }]);
    expect(await ctx.redis.exists(`${ctx.prefix}slice-buckets:${minute + 5 * 60_000}`)).toBe(0);
  });

  it('removeTimer() removes one timer across minutes in [from, to) and leaves other timers', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 2 });
    const next = minute + 60_000;
    // Timers 2 and 4 share bucket 0 in each minute.
    await index.add([
      { timerId: '2', runAt: at(10) },
      { timerId: '2', runAt: next + 10_000 },
      { timerId: '2', runAt: next + 50_000 },
      { timerId: '4', runAt: at(10) },
      { timerId: '22', runAt: at(20) },
    ]);
    expect(await index.removeTimer('2', minute, next + 30_000)).toBe(2);
    expect(await index.due(minute, 0, minute, next)).toEqual([
      { timerId: '22', runAt: at(20) }, // '22' starts with '2' but is another timer
      { timerId: '4', runAt: at(10) },
    ].sort((x, y) => x.runAt - y.runAt));
    expect(await index.due(next, 0, next, next + 60_000)).toEqual([{ timerId: '2', runAt: next + 50_000 }]);
    expect(await index.removeTimer('2', next, next + 60_000)).toBe(1);
    expect(await index.removeTimer('2', minute, next + 60_000)).toBe(0);
  });

  it('adds large batches in chunks', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 1 });
    const fires = Array.from({ length: 5_000 }, (_, i) => ({ timerId: String(1000 + i), runAt: at(i % 60) }));
    await index.add(fires);
    expect(await ctx.redis.zcard(`${ctx.prefix}slice:${minute}:0`)).toBe(5_000);
  });
});
