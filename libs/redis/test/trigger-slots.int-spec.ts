import { redisTestContext } from '@timer/testing';
import { bucketsForTriggers, TRIGGER_SLOTS_FORGET_MS, TRIGGER_SLOTS_FRESH_MS, TriggerSlots } from '../src';

describe('TriggerSlots against a real Redis', () => {
  const ctx = redisTestContext();
  const NOW = 1_900_000_000_000;

  it('adds up the fresh reports, ignores stale ones, forgets old ones, and null when none is fresh', async () => {
    const slots = new TriggerSlots(ctx.redis, ctx.prefix);
    expect(await slots.live(NOW)).toBeNull();
    await slots.report('a', 32, NOW - 1_000);
    await slots.report('b', 64, NOW - TRIGGER_SLOTS_FRESH_MS);
    await slots.report('stalled', 32, NOW - TRIGGER_SLOTS_FRESH_MS - 1);
    await slots.report('dead', 32, NOW - TRIGGER_SLOTS_FORGET_MS - 1);
    expect(await slots.live(NOW)).toEqual({ processes: 2, slots: 96, largest: 64 });
    expect(Object.keys(await ctx.redis.hgetall(slots.key)).sort()).toEqual(['a', 'b', 'stalled']);
    await slots.remove('b');
    expect(await slots.live(NOW)).toEqual({ processes: 1, slots: 32, largest: 32 });
    expect(await slots.live(NOW + TRIGGER_SLOTS_FRESH_MS)).toBeNull();
  });
});

describe('bucketsForTriggers', () => {
  it('gives a third of the slots left once the largest trigger is gone', () => {
    expect(bucketsForTriggers(null)).toBeNull();
    expect(bucketsForTriggers({ processes: 1, slots: 32, largest: 32 })).toBe(0);
    expect(bucketsForTriggers({ processes: 2, slots: 64, largest: 32 })).toBe(10);
    expect(bucketsForTriggers({ processes: 3, slots: 96, largest: 32 })).toBe(21);
    expect(bucketsForTriggers({ processes: 4, slots: 128, largest: 32 })).toBe(32);
    // Whichever trigger is lost, two minutes' slices and the default 8 catch-up slices fit the rest.
    for (const n of [2, 3, 4, 8]) {
      const b = bucketsForTriggers({ processes: n, slots: 32 * n, largest: 32 }) as number;
      expect(2 * b + 8).toBeLessThanOrEqual(32 * (n - 1));
    }
  });
});
