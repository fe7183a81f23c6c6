import Redis from 'ioredis';
import { redisTestContext, testEnv } from '@timer/testing';
import { extendLockToken, RedisKeys, RedisLock, releaseLockToken } from '../src';

describe('extendLockToken / releaseLockToken against a real Redis', () => {
  const ctx = redisTestContext();


  it('extends a RedisLock lease by its token from another process, and refuses another token', async () => {
    const held = await new RedisLock(ctx.redis, ctx.prefix).tryAcquire({ resource: 'slice:1:2', ttlMs: 1_000 });
    expect(held).toBeDefined();
    expect(new RedisKeys(ctx.prefix).lock('slice:1:2')).toBe(`${ctx.prefix}lock:slice:1:2`);
    expect(await extendLockToken(ctx.redis, ctx.prefix, { resource: 'slice:1:2', token: held!.token, ttlMs: 20_000 })).toBe('held');
    expect(await ctx.redis.pttl(`${ctx.prefix}lock:slice:1:2`)).toBeGreaterThan(15_000);
    expect(await extendLockToken(ctx.redis, ctx.prefix, { resource: 'slice:1:2', token: 'other', ttlMs: 20_000, reclaimIfFree: true })).toBe('lost');
    expect(await releaseLockToken(ctx.redis, ctx.prefix, 'slice:1:2', 'other')).toBe(false);
    expect(await releaseLockToken(ctx.redis, ctx.prefix, 'slice:1:2', held!.token)).toBe(true);
    expect(await ctx.redis.exists(`${ctx.prefix}lock:slice:1:2`)).toBe(0);
  });

  it('reclaims a free lock only when asked and when the guard key is absent', async () => {
    const options = { resource: 'r', token: 't1', ttlMs: 5_000 };
    expect(await extendLockToken(ctx.redis, ctx.prefix, options)).toBe('lost');
    expect(await ctx.redis.exists(`${ctx.prefix}lock:r`)).toBe(0);
    await ctx.redis.set(`${ctx.prefix}done`, '1');
    expect(await extendLockToken(ctx.redis, ctx.prefix, { ...options, reclaimIfFree: true, unlessKeyExists: `${ctx.prefix}done` })).toBe('lost');
    expect(await ctx.redis.exists(`${ctx.prefix}lock:r`)).toBe(0);
    expect(await extendLockToken(ctx.redis, ctx.prefix, { ...options, reclaimIfFree: true, unlessKeyExists: `${ctx.prefix}not-done` })).toBe('reclaimed');
    expect(await ctx.redis.get(`${ctx.prefix}lock:r`)).toBe('t1');
    expect(await ctx.redis.pttl(`${ctx.prefix}lock:r`)).toBeGreaterThan(4_000);
  });

  it('throws on a Redis error instead of reporting "lost"', async () => {
    // Never connected and no offline queue: every command fails at once, as during an outage.
    const broken = new Redis(testEnv().redisUrl, { lazyConnect: true, enableOfflineQueue: false });
    await expect(extendLockToken(broken, ctx.prefix, { resource: 'r', token: 't', ttlMs: 1_000 })).rejects.toThrow();
    await expect(releaseLockToken(broken, ctx.prefix, 'r', 't')).rejects.toThrow();
    broken.disconnect();
  });

  it('names the slice cursor key', () => {
    expect(new RedisKeys('timer:').sliceCursor(1_893_456_000_000, 3)).toBe('timer:slice-cursor:1893456000000:3');
  });
});
