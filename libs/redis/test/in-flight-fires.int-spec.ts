import { redisTestContext } from '@timer/testing';
import { InFlightFires } from '../src';

describe('InFlightFires against a real Redis', () => {
  const ctx = redisTestContext();
  const fires = () => new InFlightFires(ctx.redis, ctx.prefix);

  it('skip: one fire of a timer in flight at a time; its redelivery may go on; another timer is independent', async () => {
    const f = fires();
    expect(await f.enter('1', '1-1000', 'skip', 60_000, 5_000)).toEqual({ kind: 'run' });
    expect(await f.enter('1', '1-2000', 'skip', 60_000, 5_000)).toEqual({ kind: 'skip', holder: '1-1000' });
    expect(await f.enter('1', '1-1000', 'skip', 60_000, 5_000)).toEqual({ kind: 'run' });
    expect(await f.enter('2', '2-2000', 'skip', 60_000, 5_000)).toEqual({ kind: 'run' });
    await f.release('1', '1-2000'); // not the holder: changes nothing
    expect(await ctx.redis.get(`${ctx.prefix}in-flight:1`)).toBe('1-1000');
    await f.release('1', '1-1000');
    expect(await f.enter('1', '1-3000', 'skip', 60_000, 5_000)).toEqual({ kind: 'run' });
  });

  it('buffer_one: one fire waits and goes first once the marker is free; further ones are skipped', async () => {
    const f = fires();
    expect(await f.enter('1', '1-1000', 'buffer_one', 60_000, 5_000)).toEqual({ kind: 'run' });
    expect(await f.enter('1', '1-2000', 'buffer_one', 60_000, 5_000)).toEqual({ kind: 'wait', holder: '1-1000' });
    expect(await ctx.redis.pttl(`${ctx.prefix}in-flight-next:1`)).toBeLessThanOrEqual(5_000);
    expect(await f.enter('1', '1-3000', 'buffer_one', 60_000, 5_000)).toEqual({ kind: 'skip', holder: '1-1000' });
    await f.release('1', '1-1000');
    // The free marker goes to the waiting fire, not to a newcomer.
    expect(await f.enter('1', '1-4000', 'buffer_one', 60_000, 5_000)).toEqual({ kind: 'skip', holder: '1-2000' });
    expect(await f.enter('1', '1-2000', 'buffer_one', 60_000, 5_000)).toEqual({ kind: 'run' });
    expect(await ctx.redis.exists(`${ctx.prefix}in-flight-next:1`)).toBe(0);
  });

  it('expires with its holder and is held again by a retry', async () => {
    const f = fires();
    expect(await f.enter('1', '1-1000', 'skip', 200, 200)).toEqual({ kind: 'run' });
    await new Promise((r) => setTimeout(r, 300));
    expect(await f.enter('1', '1-2000', 'skip', 60_000, 5_000)).toEqual({ kind: 'run' });
    expect(await f.hold('1', '1-1000', 60_000)).toBe(false);
    await f.release('1', '1-2000');
    expect(await f.hold('1', '1-1000', 60_000)).toBe(true);
    expect(await ctx.redis.pttl(`${ctx.prefix}in-flight:1`)).toBeGreaterThan(50_000);
  });
});
