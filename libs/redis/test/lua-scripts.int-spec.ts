import { readdirSync } from 'fs';
import { redisTestContext } from '@timer/testing';
import { LUA_DIR, LUA_SCRIPTS, LuaScript, RedisKeys } from '../src';

// Each script is loaded into the real Redis (SCRIPT LOAD compiles it) and run by its SHA, as ioredis
// does for a defined command, so a syntax error or a wrong key count fails here, not in a role.
describe('Lua scripts against a real Redis', () => {
  const ctx = redisTestContext();
  const keys = () => new RedisKeys(ctx.prefix);

  const run = async (script: LuaScript, keyList: string[], ...args: (string | number)[]): Promise<unknown> => {
    const sha = (await ctx.redis.script('LOAD', script.lua)) as string;
    return ctx.redis.evalsha(sha, keyList.length, ...keyList, ...args);
  };

  it('names every .lua file once, after its key count, and uses no key beyond that count', () => {
    const files = readdirSync(LUA_DIR).filter((f) => f.endsWith('.lua')).sort();
    const named = Object.values(LUA_SCRIPTS).map((s) => `${s.name}-${s.numberOfKeys}.lua`).sort();
    expect(named).toEqual(files);
    for (const [name, script] of Object.entries(LUA_SCRIPTS)) {
      expect(script.name).toBe(name);
      const used = [...script.lua.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      expect(Math.max(...used)).toBe(script.numberOfKeys);
    }
  });

  it('deleteIfEqual deletes only while the key holds the value', async () => {
    const key = keys().lock('r');
    await ctx.redis.set(key, 'mine');
    expect(await run(LUA_SCRIPTS.deleteIfEqual, [key], 'other')).toBe(0);
    expect(await run(LUA_SCRIPTS.deleteIfEqual, [key], 'mine')).toBe(1);
    expect(await ctx.redis.exists(key)).toBe(0);
  });

  it('takeOverClaim moves a claim only while it holds the value read', async () => {
    const key = keys().fireClaim('1-1000');
    await ctx.redis.set(key, 'dead:1@5');
    expect(await run(LUA_SCRIPTS.takeOverClaim, [key], 'other', 'mine:1@9', 60_000)).toBe(0);
    expect(await run(LUA_SCRIPTS.takeOverClaim, [key], 'dead:1@5', 'mine:1@9', 60_000)).toBe(1);
    expect(await ctx.redis.get(key)).toBe('mine:1@9');
    expect(await ctx.redis.pttl(key)).toBeGreaterThan(50_000);
  });

  it('extendLock extends only the holder token', async () => {
    const key = keys().lock('r');
    await ctx.redis.set(key, 'mine', 'PX', 1_000);
    expect(await run(LUA_SCRIPTS.extendLock, [key], 'other', 60_000)).toBe(0);
    expect(await run(LUA_SCRIPTS.extendLock, [key], 'mine', 60_000)).toBe(1);
    expect(await ctx.redis.pttl(key)).toBeGreaterThan(1_000);
  });

  it('extendLockToken holds, reclaims a free lock unless its guard exists, and reports a lost one', async () => {
    const key = keys().lock('s');
    const guard = keys().sliceDone(0, 1);
    expect(await run(LUA_SCRIPTS.extendLockToken, [key], 't', 5_000, '0')).toBe(0);
    expect(await run(LUA_SCRIPTS.extendLockToken, [key, guard], 't', 5_000, '1')).toBe(2);
    expect(await run(LUA_SCRIPTS.extendLockToken, [key], 't', 5_000, '0')).toBe(1);
    await ctx.redis.del(key);
    await ctx.redis.set(guard, '1');
    expect(await run(LUA_SCRIPTS.extendLockToken, [key, guard], 't', 5_000, '1')).toBe(0);
  });

  it('enterInFlight and holdInFlight let one fire of a timer run, one wait (buffer_one) and others skip', async () => {
    const [flight, next] = [keys().inFlight('7'), keys().inFlightNext('7')];
    expect(await run(LUA_SCRIPTS.enterInFlight, [flight, next], '7-1', 60_000, 5_000, 'buffer_one')).toEqual(['run', '7-1']);
    expect(await run(LUA_SCRIPTS.enterInFlight, [flight, next], '7-2', 60_000, 5_000, 'buffer_one')).toEqual(['wait', '7-1']);
    expect(await run(LUA_SCRIPTS.enterInFlight, [flight, next], '7-3', 60_000, 5_000, 'buffer_one')).toEqual(['skip', '7-1']);
    expect(await run(LUA_SCRIPTS.holdInFlight, [flight], '7-2', 60_000)).toBe(0);
    expect(await run(LUA_SCRIPTS.holdInFlight, [flight], '7-1', 60_000)).toBe(1);
  });

  it('syncPausedApps writes what the ledger says and removes what it no longer lists', async () => {
    const key = keys().pausedApps();
    await ctx.redis.hset(key, 'gone', '1:2:3');
    expect(await run(LUA_SCRIPTS.syncPausedApps, [key], 100_000, 10_000, 'a', '50', '')).toEqual([1, 1]);
    expect(await ctx.redis.hgetall(key)).toEqual({ a: '50::100000' });
  });

  it('sliceBuckets records the first count and returns the count in force', async () => {
    const key = keys().sliceBuckets(0);
    const expireAt = Date.now() + 60_000;
    expect(await run(LUA_SCRIPTS.sliceBuckets, [key], 10, expireAt)).toBe('10');
    expect(await run(LUA_SCRIPTS.sliceBuckets, [key], 20, expireAt)).toBe('10');
  });

  it('removeTimer removes one timer\'s members in the range only', async () => {
    const key = keys().slice(0, 1);
    await ctx.redis.zadd(key, 1_000, '7-1000', 2_000, '7-2000', 1_500, '17-1500');
    expect(await run(LUA_SCRIPTS.removeTimer, [key], 0, 2_000, '7-')).toBe(1);
    expect(await ctx.redis.zrange(key, 0, -1)).toEqual(['17-1500', '7-2000']);
  });

  it('markCalls and takeOverCall fence a claim between its holder and a taker-over', async () => {
    const key = keys().executorCalls('host:1:aa', 0);
    await ctx.redis.setbit(key, 0, 1);
    expect(await run(LUA_SCRIPTS.markCalls, [key], 60_000, 0)).toEqual([1]);
    expect(await run(LUA_SCRIPTS.takeOverCall, [key], 60_000, 0)).toBe(1);
    expect(await run(LUA_SCRIPTS.takeOverCall, [key], 60_000, 1)).toBe(0);
    expect(await run(LUA_SCRIPTS.markCalls, [key], 60_000, 1)).toEqual([0]);
    expect(await run(LUA_SCRIPTS.takeOverCall, [keys().executorCalls('host:1:aa', 1)], 60_000, 0)).toBe(2);
  });

  it('incrWindow counts in a window that expires, and peekWindow reads it without counting', async () => {
    const key = keys().rateLimit('app-1');
    expect(await run(LUA_SCRIPTS.peekWindow, [key])).toEqual([0, 0]);
    const [n, ttl] = (await run(LUA_SCRIPTS.incrWindow, [key], 60_000)) as [number, number];
    expect(n).toBe(1);
    expect(ttl).toBeGreaterThan(0);
    expect(await run(LUA_SCRIPTS.incrWindow, [key], 60_000)).toEqual([2, expect.any(Number)]);
    expect((await run(LUA_SCRIPTS.peekWindow, [key]) as number[])[0]).toBe(2);
  });
});
