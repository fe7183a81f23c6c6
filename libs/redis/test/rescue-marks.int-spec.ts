import { redisTestContext } from '@timer/testing';
import { RescueMarks } from '../src';

describe('RescueMarks against a real Redis', () => {
  const ctx = redisTestContext();
  const marks = () => new RescueMarks(ctx.redis, ctx.prefix);

  it('marks a rescue at most once per TTL', async () => {
    const m = marks();
    expect(await m.mark(['1-100', '2-100'], 60_000)).toEqual([true, true]);
    expect(await m.mark(['1-100', '3-100'], 60_000)).toEqual([false, true]);
    expect(await ctx.redis.pttl(m.rescuedKey('1-100'))).toBeGreaterThan(50_000);
  });

  it('tells which fires wait in the broker after a hand-back, until the mark lapses, a later hand-back replacing it', async () => {
    const m = marks();
    await m.handedBack(['1-200', '2-200'], 60_000);
    expect(await m.waitingInBroker(['1-200', '2-200', '3-200'])).toEqual([true, true, false]);
    // Handed back again, coming back sooner: the newer mark counts.
    await m.handedBack(['1-200'], 150);
    expect(await ctx.redis.pttl(m.handedBackKey('1-200'))).toBeLessThanOrEqual(150);
    await new Promise((r) => setTimeout(r, 200));
    expect(await m.waitingInBroker(['1-200', '2-200'])).toEqual([false, true]);
    // Independent of the rescue marks: a hand-back does not stop a rescue of a claim or retry of the same fire.
    expect(await m.mark(['2-200'], 60_000)).toEqual([true]);
  });
});
