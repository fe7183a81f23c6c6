import { redisTestContext } from '@timer/testing';
import { BLOOM_MIN_FIRES, BLOOM_OVERFULL_FACTOR, BLOOM_RETAIN_MS, bloomSize, RedisKeys, SliceBloom, SliceIndex } from '../src';

const MINUTE = 60_000;
const P = 0.01;

describe('SliceBloom against a real Redis', () => {
  const ctx = redisTestContext();
  const bloom = (p = P) => new SliceBloom(ctx.redis, ctx.prefix, { falsePositiveRate: p });
  /** The minute after the current one: its filter lives well beyond the test. */
  const minute = () => SliceBloom.sliceOf(Date.now()) + MINUTE;
  const ids = (m: number, n: number, tag = '') => Array.from({ length: n }, (_, i) => ({ at: m + (i % MINUTE), id: `${tag}${i + 1}-${m + (i % MINUTE)}` }));

  it('sizes a slice for its fire count and the stated rate, and every later writer keeps that size', async () => {
    const b = bloom();
    const m = minute();
    expect(await b.add(ids(m, 100), () => 20_000)).toBe(100);
    const want = bloomSize(20_000, P);
    expect(await b.describe(m)).toMatchObject({ bits: want.bits, hashes: want.hashes, fires: 20_000, added: 100 });
    // A second writer asked to size it for 1 million (another process, a later count) adds into the same filter.
    await b.add(ids(m, 50, 'x'), () => 1_000_000);
    expect(await b.describe(m)).toMatchObject({ bits: want.bits, hashes: want.hashes, fires: 20_000, added: 150 });
    // About m / 8 bytes of bits and the 16-byte header.
    expect(await ctx.redis.strlen(new RedisKeys(ctx.prefix).sliceBloom(m))).toBeLessThanOrEqual(Math.ceil((want.bits + 128) / 8));
  });

  it('answers "maybe" for every item added (no false negatives) and "certainly not" for others at about the stated rate', async () => {
    const b = bloom();
    const m = minute();
    const n = 20_000;
    const added = ids(m, n);
    for (let i = 0; i < n; i += 1_000) await b.add(added.slice(i, i + 1_000), () => n);
    const seen = await b.check(added);
    expect(seen.filter((x) => x !== true)).toHaveLength(0);
    const others = ids(m, 100_000, 'other-');
    const answers = await b.check(others);
    expect(answers.every((x) => x === true || x === false)).toBe(true);
    const rate = answers.filter((x) => x === true).length / others.length;
    // 100,000 trials at p = 1 %: the standard deviation is 0.03 points.
    expect(rate).toBeGreaterThan(P * 0.7);
    expect(rate).toBeLessThan(P * 1.3);
  });

  it('keeps the slices of one call apart, in one round trip, and answers in the order asked', async () => {
    const b = bloom();
    const m = minute();
    await b.add([{ at: m + 5, id: 'a' }, { at: m + MINUTE + 5, id: 'b' }], () => 10);
    expect(await b.check([{ at: m + MINUTE + 1, id: 'b' }, { at: m + 1, id: 'b' }, { at: m + 2, id: 'a' }, { at: m + MINUTE + 2, id: 'a' }])).toEqual([true, false, true, false]);
    expect((await b.describe(m))?.fires).toBe(BLOOM_MIN_FIRES);
  });

  it('expires with its slice: at the end of its minute plus BLOOM_RETAIN_MS; a slice already past writes nothing and answers "not known"', async () => {
    const b = bloom();
    const m = minute();
    await b.add([{ at: m, id: 'a' }], () => 1);
    const ttl = (await b.describe(m))?.ttlMs ?? 0;
    const expected = m + MINUTE + BLOOM_RETAIN_MS - Date.now();
    expect(ttl).toBeGreaterThan(expected - 5_000);
    expect(ttl).toBeLessThanOrEqual(expected + 50); // Redis's clock and this process's, in ms
    const old = SliceBloom.sliceOf(Date.now() - BLOOM_RETAIN_MS - 2 * MINUTE);
    await b.add([{ at: old, id: 'a' }], () => 1);
    expect(await b.describe(old)).toBeNull();
    expect(await b.check([{ at: old, id: 'a' }])).toEqual([null]);
  });

  it('answers "not known" for a slice without a filter (never written, lost with Redis) and for an overfull one', async () => {
    const b = bloom();
    const m = minute();
    expect(await b.check([{ at: m, id: 'a' }])).toEqual([null]);
    const over = Math.floor(BLOOM_MIN_FIRES * BLOOM_OVERFULL_FACTOR) + 1;
    await b.add(ids(m, over), () => 0);
    expect(await b.check([{ at: m, id: '1-' + m }])).toEqual([null]);
  });

  it('counts a minute\'s fires in the slice index over its buckets, 0 when none are indexed', async () => {
    const index = new SliceIndex(ctx.redis, ctx.prefix, { defaultBuckets: 4 });
    const m = minute();
    await index.add(Array.from({ length: 37 }, (_, i) => ({ timerId: String(i + 1), runAt: m + i * 1_000 })));
    const b = bloom();
    expect(await b.indexedFires(index, m)).toBe(37);
    expect(await b.indexedFires(index, m + MINUTE)).toBe(0);
  });
});
