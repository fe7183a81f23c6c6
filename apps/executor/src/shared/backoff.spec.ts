import { RETRY_BACKOFF_CAP_MS, retryDelayMs } from './backoff';

describe('retryDelayMs', () => {
  it('doubles per failed attempt around backoff_ms * 2^(n-1)', () => {
    const mid = () => 0.5;
    expect(retryDelayMs(1_000, 1, mid)).toBe(1_000);
    expect(retryDelayMs(1_000, 2, mid)).toBe(2_000);
    expect(retryDelayMs(1_000, 3, mid)).toBe(4_000);
  });

  it('stays within +/-20 % jitter', () => {
    expect(retryDelayMs(1_000, 2, () => 0)).toBe(1_600);
    expect(retryDelayMs(1_000, 2, () => 0.999999)).toBe(2_400);
    for (let i = 0; i < 1_000; i++) {
      const d = retryDelayMs(500, 3);
      expect(d).toBeGreaterThanOrEqual(1_600);
      expect(d).toBeLessThanOrEqual(2_400);
    }
  });

  it('spreads delays (not all the same)', () => {
    const seen = new Set(Array.from({ length: 50 }, () => retryDelayMs(10_000, 1)));
    expect(seen.size).toBeGreaterThan(10);
  });

  it('never exceeds one hour, even with jitter or huge attempts', () => {
    expect(retryDelayMs(1_000, 40, () => 0.999)).toBe(RETRY_BACKOFF_CAP_MS);
    expect(retryDelayMs(3_000_000, 2, () => 0.999)).toBe(RETRY_BACKOFF_CAP_MS);
    expect(retryDelayMs(1_000, 40, () => 0)).toBe(0.8 * RETRY_BACKOFF_CAP_MS);
  });

  it('is never negative', () => {
    expect(retryDelayMs(-5, 1)).toBe(0);
    expect(retryDelayMs(0, 3)).toBe(0);
  });
});
