import { Backoff } from './backoff';

describe('Backoff', () => {
  it('doubles from the initial delay and stops at the cap', () => {
    const backoff = new Backoff(100, 1000, 0.3, () => 1);
    expect([1, 2, 3, 4, 5, 6].map(() => backoff.next())).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoff.attempts).toBe(6);
  });

  it('keeps jitter within the last fraction of the delay and never above the cap', () => {
    const low = new Backoff(100, 1000, 0.3, () => 0);
    expect([1, 2, 3, 4, 5].map(() => low.next())).toEqual([70, 140, 280, 560, 700]);
    const random = new Backoff(100, 1000);
    for (let i = 0; i < 200; i++) {
      const delay = random.next();
      expect(delay).toBeGreaterThanOrEqual(Math.min(1000, 100 * 2 ** i) * 0.7 - 1);
      expect(delay).toBeLessThanOrEqual(1000);
    }
  });

  it('starts over after reset', () => {
    const backoff = new Backoff(50, 500, 0, () => 0.5);
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.attempts).toBe(0);
    expect(backoff.next()).toBe(50);
  });

  it('rejects nonsensical settings', () => {
    expect(() => new Backoff(0, 100)).toThrow(RangeError);
    expect(() => new Backoff(100, 50)).toThrow(RangeError);
  });
});
