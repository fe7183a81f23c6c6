import { redisTestContext } from '@timer/testing';
import { CALL_MARKS_CHUNK, CallMarks } from '../src';

describe('CallMarks against a real Redis', () => {
  const ctx = redisTestContext();
  const marks = () => new CallMarks(ctx.redis, ctx.prefix);

  it('tells a taker-over whether the claim called, and fences the holder off from calling afterwards', async () => {
    const m = marks();
    await m.open('host:1:aa', 0, 60_000);
    await expect(m.markMany('host:1:aa', 0, [0, CALL_MARKS_CHUNK - 1], 60_000)).resolves.toEqual([true, true]);
    expect(await m.takeOver('host:1:aa', 0, CALL_MARKS_CHUNK - 1, 60_000)).toBe('called');
    expect(await m.takeOver('host:1:aa', 0, 7, 60_000)).toBe('not_called');
    // The holder (a paused process, not a dead one) comes back: claim 7 may no longer call; 8 may.
    await expect(m.markMany('host:1:aa', 0, [7, 8], 60_000)).resolves.toEqual([false, true]);
    expect(await ctx.redis.pttl(m.key('host:1:aa', 0))).toBeGreaterThan(50_000);
    // One chunk is 2 bits a claim and the opening bit.
    expect(await ctx.redis.strlen(m.key('host:1:aa', 0))).toBeLessThanOrEqual(CALL_MARKS_CHUNK / 4 + 1);
  });

  it('proves nothing for a chunk that is not open: never opened, flushed and re-created by a mark, or closed', async () => {
    const m = marks();
    await m.markMany('host:2:bb', 0, [3], 60_000);
    expect(await m.takeOver('host:2:bb', 0, 4, 60_000)).toBe('unknown');
    await m.open('host:2:bb', 1, 60_000);
    await ctx.redis.del(m.key('host:2:bb', 1)); // FLUSHALL, or expiry
    await m.markMany('host:2:bb', 1, [5], 60_000);
    expect(await m.takeOver('host:2:bb', 1, 6, 60_000)).toBe('unknown');
    await m.open('host:2:bb', 2, 60_000);
    await m.close('host:2:bb', 2);
    expect(await m.takeOver('host:2:bb', 2, 6, 60_000)).toBe('unknown');
  });

  it('keeps a chunk while it exists and reports one that is gone', async () => {
    const m = marks();
    await m.open('host:3:cc', 0, 1_000);
    expect(await m.keep('host:3:cc', 0, 60_000)).toBe(true);
    expect(await ctx.redis.pttl(m.key('host:3:cc', 0))).toBeGreaterThan(50_000);
    expect(await m.keep('host:3:cc', 1, 60_000)).toBe(false);
  });
});
