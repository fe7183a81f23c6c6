import Redis from 'ioredis';
import { testEnv, uniqueId } from '@timer/testing';
import { extendLockToken, lockTokenKey, RedisLock, releaseLockToken, sliceCursorKey } from '../src';

describe('extendLockToken / releaseLockToken against a real Redis', () => {
  let redis: Redis;
  let prefix: string;

  beforeAll(() => {
    redis = new Redis(testEnv().redisUrl, { maxRetriesPerRequest: 1 });
  });
  beforeEach(() => {
    prefix = `${uniqueId('it')}:`;
  });
  afterEach(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('extends a RedisLock lease by its token from another process, and refuses another token', async () => {
    const held = await new RedisLock(redis, prefix).tryAcquire({ resource: 'slice:1:2', ttlMs: 1_000 });
    expect(held).toBeDefined();
    expect(lockTokenKey(prefix, 'slice:1:2')).toBe(`${prefix}lock:slice:1:2`);
    expect(await extendLockToken(redis, prefix, { resource: 'slice:1:2', token: held!.token, ttlMs: 20_000 })).toBe('held');
    expect(await redis.pttl(`${prefix}lock:slice:1:2`)).toBeGreaterThan(15_000);
    expect(await extendLockToken(redis, prefix, { resource: 'slice:1:2', token: 'other', ttlMs: 20_000, reclaimIfFree: true })).toBe('lost');
    expect(await releaseLockToken(redis, prefix, 'slice:1:2', 'other')).toBe(false);
    expect(await releaseLockToken(redis, prefix, 'slice:1:2', held!.token)).toBe(true);
    expect(await redis.exists(`${prefix}lock:slice:1:2`)).toBe(0);
  });

  it('reclaims a free lock only when asked and when the guard key is absent', async () => {
    const options = { resource: 'r', token: 't1', ttlMs: 5_000 };
    expect(await extendLockToken(redis, prefix, options)).toBe('lost');
    expect(await redis.exists(`${prefix}lock:r`)).toBe(0);
    await redis.set(`${prefix}done`, '1');
    expect(await extendLockToken(redis, prefix, { ...options, reclaimIfFree: true, unlessKeyExists: `${prefix}done` })).toBe('lost');
    expect(await redis.exists(`${prefix}lock:r`)).toBe(0);
    expect(await extendLockToken(redis, prefix, { ...options, reclaimIfFree: true, unlessKeyExists: `${prefix}not-done` })).toBe('reclaimed');
    expect(await redis.get(`${prefix}lock:r`)).toBe('t1');
    expect(await redis.pttl(`${prefix}lock:r`)).toBeGreaterThan(4_000);
  });

  it('throws on a Redis error instead of reporting "lost"', async () => {
    // Never connected and no offline queue: every command fails at once, as during an outage.
    const broken = new Redis(testEnv().redisUrl, { lazyConnect: true, enableOfflineQueue: false });
    await expect(extendLockToken(broken, prefix, { resource: 'r', token: 't', ttlMs: 1_000 })).rejects.toThrow();
    await expect(releaseLockToken(broken, prefix, 'r', 't')).rejects.toThrow();
    broken.disconnect();
  });

  it('names the slice cursor key', () => {
    expect(sliceCursorKey('timer:', 1_893_456_000_000, 3)).toBe('timer:slice-cursor:1893456000000:3');
  });
});
