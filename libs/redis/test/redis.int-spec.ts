import Redis from 'ioredis';
import { redisTestContext } from '@timer/testing';
import { RedisLock } from '../src';

describe('RedisLock against a real Redis', () => {
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
});
