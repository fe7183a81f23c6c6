import { redisTestContext } from '@timer/testing';
import { inPause, PAUSE_WRITE_TRUST_MS, PausedApps, RedisKeys } from '../src';

describe('PausedApps against a real Redis', () => {
  const ctx = redisTestContext();
  const T = 1_900_000_000_000;

  it('records pauses and resumes the executors read back', async () => {
    const paused = new PausedApps(ctx.redis, ctx.prefix);
    await paused.pause('a', T, T);
    await paused.pause('b', T + 5, T + 5);
    await paused.resume('b', T + 5, T + 2_005, T + 5);
    expect(await paused.read()).toEqual(
      new Map([
        ['a', { pausedAt: T, resumedAt: null }],
        ['b', { pausedAt: T + 5, resumedAt: T + 2_005 }],
      ]),
    );
    expect(await ctx.redis.hget(new RedisKeys(ctx.prefix).pausedApps(), 'b')).toBe(`${T + 5}:${T + 2_005}:${T + 5}`);
    // An entry that is not of this format is left out, not a crash.
    await ctx.redis.hset(new RedisKeys(ctx.prefix).pausedApps(), 'junk', 'x');
    expect([...(await paused.read()).keys()].sort()).toEqual(['a', 'b']);
  });

  it('sync makes the mirror what MySQL says: adds, corrects and drops entries', async () => {
    const paused = new PausedApps(ctx.redis, ctx.prefix);
    const now = T + 60_000;
    await paused.pause('stale', T, T); // MySQL has no pause for it (its transaction rolled back long ago)
    await paused.pause('old', T - 5_000, T - 5_000); // MySQL: paused again later
    const result = await paused.sync(
      [
        { app: 'lost', pausedAt: T + 1_000, resumedAt: null }, // a flushed Redis
        { app: 'old', pausedAt: T + 2_000, resumedAt: null },
      ],
      now,
    );
    expect(result).toEqual({ written: 2, removed: 1 });
    expect(await paused.read()).toEqual(
      new Map([
        ['lost', { pausedAt: T + 1_000, resumedAt: null }],
        ['old', { pausedAt: T + 2_000, resumedAt: null }],
      ]),
    );
    // Nothing to change: nothing written.
    expect(await paused.sync([{ app: 'lost', pausedAt: T + 1_000, resumedAt: null }, { app: 'old', pausedAt: T + 2_000, resumedAt: null }], now + 5_000)).toEqual({ written: 0, removed: 0 });
  });

  it('sync keeps what the api wrote moments ago ahead of MySQL, and gives way to MySQL once that is old', async () => {
    const paused = new PausedApps(ctx.redis, ctx.prefix);
    const now = T + 60_000;
    await paused.pause('new', now - 100, now - 100); // a pause whose commit MySQL does not show yet
    await paused.resume('resumed', T, now + 2_000, now - 50); // a resume MySQL does not show yet
    await paused.resume('rolled-back', T, now - 20_000, now - 22_000); // a resume that never committed
    const ledger = [
      { app: 'resumed', pausedAt: T, resumedAt: null },
      { app: 'rolled-back', pausedAt: T, resumedAt: null },
    ];
    expect(await paused.sync(ledger, now)).toEqual({ written: 1, removed: 0 });
    const seen = await paused.read();
    expect(seen.get('new')).toEqual({ pausedAt: now - 100, resumedAt: null });
    expect(seen.get('resumed')).toEqual({ pausedAt: T, resumedAt: now + 2_000 });
    expect(seen.get('rolled-back')).toEqual({ pausedAt: T, resumedAt: null });
    // An older pause than MySQL's is never kept, however fresh.
    await paused.pause('resumed', T - 1, now);
    await paused.sync(ledger, now);
    expect((await paused.read()).get('resumed')).toEqual({ pausedAt: T, resumedAt: null });
    // Past the trust: the pause MySQL never got is dropped.
    await paused.sync(ledger, now + PAUSE_WRITE_TRUST_MS);
    expect((await paused.read()).has('new')).toBe(false);
  });

  it('tells which fires fall in a pause', () => {
    expect(inPause(undefined, T)).toBe(false);
    expect(inPause({ pausedAt: T, resumedAt: null }, T - 1)).toBe(false);
    expect(inPause({ pausedAt: T, resumedAt: null }, T)).toBe(true);
    expect(inPause({ pausedAt: T, resumedAt: T + 10 }, T + 9)).toBe(true);
    expect(inPause({ pausedAt: T, resumedAt: T + 10 }, T + 10)).toBe(false);
  });
});
