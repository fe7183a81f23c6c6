import { redisTestContext } from '@timer/testing';
import { EXECUTOR_LAG_FORGET_MS, EXECUTOR_LAG_FRESH_MS, ExecutorLag } from '../src';

describe('ExecutorLag against a real Redis', () => {
  const ctx = redisTestContext();
  const NOW = 1_900_000_000_000;

  it('gives the largest fresh report, ignores stale ones, forgets old ones, and null when none is fresh', async () => {
    const lag = new ExecutorLag(ctx.redis, ctx.prefix);
    expect(await lag.current(NOW)).toBeNull();
    await lag.report('a', 120, NOW - 1_000);
    await lag.report('b', 2_400.4, NOW - EXECUTOR_LAG_FRESH_MS);
    await lag.report('stalled', 60_000, NOW - EXECUTOR_LAG_FRESH_MS - 1);
    await lag.report('dead', 90_000, NOW - EXECUTOR_LAG_FORGET_MS - 1);
    expect(await lag.current(NOW)).toBe(2_400);
    expect(Object.keys(await ctx.redis.hgetall(lag.key)).sort()).toEqual(['a', 'b', 'stalled']);
    await lag.remove('b');
    expect(await lag.current(NOW)).toBe(120);
    expect(await lag.current(NOW + EXECUTOR_LAG_FRESH_MS)).toBeNull();
  });
});
