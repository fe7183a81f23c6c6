import { redisTestContext } from '@timer/testing';
import { FIRST_CLAIM_FRESH_MS, FireClaims, RedisKeys, SETTLED_CLAIM } from '../src';

describe('FireClaims against a real Redis', () => {
  const ctx = redisTestContext();
  const claims = () => new FireClaims(ctx.redis, ctx.prefix);

  it('claims each free fire once, with a TTL, and reports the holder of a held one; a look claims nothing', async () => {
    const c = claims();
    const first = await c.claimMany(
      [
        { fireId: '1-1000', token: 'a:1@5' },
        { fireId: '1-2000', token: null },
      ],
      60_000,
      'epoch-a',
    );
    expect(first).toEqual({ replies: [{ kind: 'claimed' }, { kind: 'free' }], epoch: 'epoch-a', created: true });
    const second = await c.claimMany(
      [
        { fireId: '1-1000', token: 'b:1@9' },
        { fireId: '1-2000', token: 'b:2@9' },
        { fireId: '1-1000', token: null },
      ],
      60_000,
      'epoch-b',
    );
    expect(second).toEqual({ replies: [{ kind: 'held', holder: 'a:1@5' }, { kind: 'claimed' }, { kind: 'held', holder: 'a:1@5' }], epoch: 'epoch-a', created: false });
    expect(await ctx.redis.pttl(c.key('1-1000'))).toBeGreaterThan(50_000);
    expect(await ctx.redis.pttl(new RedisKeys(ctx.prefix).claimEpoch())).toBe(-1);
  });

  it('moves a claim to a taker only while the value read still holds, so two takers cannot both win', async () => {
    const c = claims();
    await c.claimMany([{ fireId: '2-1000', token: 'dead:1@5' }], 60_000, 'e');
    const takers = await Promise.all([c.takeOver('2-1000', 'dead:1@5', 'x:1@9', 60_000), c.takeOver('2-1000', 'dead:1@5', 'y:1@9', 60_000)]);
    expect(takers.filter(Boolean)).toHaveLength(1);
    expect(await ctx.redis.get(c.key('2-1000'))).toBe(takers[0] ? 'x:1@9' : 'y:1@9');
    expect(await c.takeOver('3-1000', 'dead:1@5', 'x:1@9', 60_000)).toBe(false);
  });

  it('tells a batch after a flush that the epoch was missing', async () => {
    const c = claims();
    await c.claimMany([{ fireId: '4-1000', token: 'a:1@5' }], 60_000, 'e1');
    await ctx.redis.del(new RedisKeys(ctx.prefix).claimEpoch(), c.key('4-1000'));
    const after = await c.claimMany([{ fireId: '4-1000', token: 'b:1@5' }], 60_000, 'e2');
    expect(after).toEqual({ replies: [{ kind: 'claimed' }], epoch: 'e2', created: true });
  });

  it('fences a settled fire nobody claimed until past any new claim of it, and leaves a claim already taken alone', async () => {
    const c = claims();
    await c.claimMany([{ fireId: '5-2000', token: 'a:1@5' }], 60_000, 'e');
    const latestDue = Date.now() + 10_000;
    await c.fence([
      { fireId: '5-1000', latestDue },
      { fireId: '5-2000', latestDue },
    ]);
    expect(await ctx.redis.get(c.key('5-1000'))).toBe(SETTLED_CLAIM);
    expect(await ctx.redis.get(c.key('5-2000'))).toBe('a:1@5');
    expect(await ctx.redis.pttl(c.key('5-1000'))).toBeGreaterThan(10_000 + FIRST_CLAIM_FRESH_MS);
    const later = await c.claimMany([{ fireId: '5-1000', token: 'b:1@9' }], 60_000, 'e');
    expect(later.replies).toEqual([{ kind: 'held', holder: SETTLED_CLAIM }]);
  });
});
