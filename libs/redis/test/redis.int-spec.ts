import Redis from 'ioredis';
import { redisTestContext } from '@timer/testing';
import { BLOOM_BATCH, BloomFilter, RedisLock } from '../src';

describe('RedisLock and BloomFilter against a real Redis', () => {
  const ctx = redisTestContext();


  describe('RedisLock', () => {
    it('grants a resource to one holder at a time, with the lease as TTL', async () => {
      const a = new RedisLock(ctx.redis, ctx.prefix);
      const b = new RedisLock(ctx.redis, ctx.prefix);
      const first = await a.tryAcquire({ resource: 'slice:1', ttlMs: 5_000 });
      expect(first).toBeDefined();
      expect(await b.tryAcquire({ resource: 'slice:1', ttlMs: 5_000 })).toBeUndefined();
      const ttl = await ctx.redis.pttl(`${ctx.prefix}lock:slice:1`);
      expect(ttl).toBeGreaterThan(4_000);
      expect(ttl).toBeLessThanOrEqual(5_000);
      expect(await b.tryAcquire({ resource: 'slice:2', ttlMs: 5_000 })).toBeDefined();
    });

    it('lets the lease expire so a dead holder does not block others', async () => {
      const lock = new RedisLock(ctx.redis, ctx.prefix);
      expect(await lock.tryAcquire({ resource: 'r', ttlMs: 100 })).toBeDefined();
      await new Promise((r) => setTimeout(r, 200));
      expect(await lock.tryAcquire({ resource: 'r', ttlMs: 100 })).toBeDefined();
    });

    it('extends and releases only with the holder token', async () => {
      const lock = new RedisLock(ctx.redis, ctx.prefix);
      const first = await lock.tryAcquire({ resource: 'r', ttlMs: 100 });
      await new Promise((r) => setTimeout(r, 200));
      const second = await lock.tryAcquire({ resource: 'r', ttlMs: 10_000 });
      expect(second).toBeDefined();
      // The late first holder must neither extend nor release the second holder's lease.
      expect(await first!.extend(60_000)).toBe(false);
      expect(await first!.release()).toBe(false);
      expect(await ctx.redis.get(`${ctx.prefix}lock:r`)).toBe(second!.token);
      expect(await second!.extend(60_000)).toBe(true);
      expect(await ctx.redis.pttl(`${ctx.prefix}lock:r`)).toBeGreaterThan(50_000);
      expect(await second!.release()).toBe(true);
      expect(await ctx.redis.exists(`${ctx.prefix}lock:r`)).toBe(0);
    });

    it('withLock releases in finally, also when the work throws, and skips work when held', async () => {
      const lock = new RedisLock(ctx.redis, ctx.prefix);
      await expect(lock.withLock({ resource: 'w', ttlMs: 10_000 }, async () => { throw new Error('boom'); })).rejects.toThrow('boom');
      expect(await ctx.redis.exists(`${ctx.prefix}lock:w`)).toBe(0);

      const holder = await lock.tryAcquire({ resource: 'w', ttlMs: 10_000 });
      const work = jest.fn(async () => 1);
      expect(await lock.withLock({ resource: 'w', ttlMs: 10_000 }, work)).toEqual({ acquired: false });
      expect(work).not.toHaveBeenCalled();
      await holder!.release();
      expect(await lock.withLock({ resource: 'w', ttlMs: 10_000 }, work)).toEqual({ acquired: true, value: 1 });
    });

    it('reports an unreachable Redis as "not acquired" instead of throwing', async () => {
      const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
      dead.on('error', () => undefined);
      const lock = new RedisLock(dead, ctx.prefix);
      await expect(lock.tryAcquire({ resource: 'r', ttlMs: 1_000 })).resolves.toBeUndefined();
      dead.disconnect();
    });
  });

  describe('BloomFilter', () => {
    const day = Date.UTC(2026, 10, 22, 12, 0);

    it('answers "certainly not" before add and "maybe" after, per UTC day of the fire', async () => {
      const bloom = new BloomFilter(ctx.redis, ctx.prefix, { bits: 1 << 16, hashes: 5, ttlMs: 60_000 });
      expect(await bloom.mightContain('42-1000', day)).toBe(false);
      expect(await bloom.add('42-1000', day)).toBe(false);
      expect(await bloom.mightContain('42-1000', day)).toBe(true);
      expect(await bloom.add('42-1000', day)).toBe(true);
      // Another day's bitmap is independent.
      expect(await bloom.mightContain('42-1000', day + 86_400_000)).toBe(false);
      const ttl = await ctx.redis.pttl(`${ctx.prefix}bloom:2026-11-22`);
      expect(ttl).toBeGreaterThan(50_000);
    });

    it('keeps false positives near the configured rate (AND of all bits, not OR)', async () => {
      // 2,000 items in 2^16 bits with 5 hashes: theory ~0.2% false positives; OR would be ~100%.
      const bloom = new BloomFilter(ctx.redis, ctx.prefix, { bits: 1 << 16, hashes: 5, ttlMs: 60_000 });
      for (let i = 0; i < 2_000; i++) await bloom.add(`in-${i}`, day);
      let falsePositives = 0;
      for (let i = 0; i < 2_000; i++) if (await bloom.mightContain(`out-${i}`, day)) falsePositives++;
      expect(falsePositives / 2_000).toBeLessThan(0.01);
      for (let i = 0; i < 2_000; i += 97) expect(await bloom.mightContain(`in-${i}`, day)).toBe(true);
    });

    it('answers each of many calls made in one turn (one script call per day, kind and BLOOM_BATCH items)', async () => {
      const bloom = new BloomFilter(ctx.redis, ctx.prefix, { bits: 1 << 20, hashes: 5, ttlMs: 60_000 });
      const nextDay = day + 86_400_000;
      // Also loads both scripts, so no NOSCRIPT resend is counted below.
      await Promise.all([bloom.add('a', day), bloom.add('b', nextDay), bloom.mightContain('z', day)]);
      const calls = jest.spyOn(ctx.redis, 'sendCommand');
      const [addA, addC, hasA, hasB, hasBNext, hasC, many] = await Promise.all([
        bloom.add('a', day),
        bloom.add('c', day),
        bloom.mightContain('a', day),
        bloom.mightContain('b', day),
        bloom.mightContain('b', nextDay),
        bloom.mightContain('c', day), // added in this same turn: adds go first
        Promise.all(Array.from({ length: 2_500 }, (_, i) => bloom.add(`m-${i}`, day))),
      ]);
      const sent = calls.mock.calls.filter(([c]) => /^eval/.test(c.name)).length;
      calls.mockRestore();
      expect([addA, addC, hasA, hasB, hasBNext, hasC]).toEqual([true, false, true, false, true, true]);
      expect(many.filter(Boolean).length).toBeLessThan(25); // new items: (almost) never "already there"
      // 2,502 adds of one day in 3 calls of at most BLOOM_BATCH, lookups of each of two days in one each
      expect(BLOOM_BATCH).toBe(1_000);
      expect(sent).toBe(5);
      const again = await Promise.all(Array.from({ length: 2_500 }, (_, i) => bloom.mightContain(`m-${i}`, day)));
      expect(again.every(Boolean)).toBe(true);
    });

    it('rejects every waiting call when Redis fails', async () => {
      const dead = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
      dead.on('error', () => undefined);
      const bloom = new BloomFilter(dead, ctx.prefix);
      const results = await Promise.allSettled([bloom.mightContain('x', day), bloom.add('y', day)]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      dead.disconnect();
    });
  });
});
