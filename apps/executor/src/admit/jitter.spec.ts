import { fireDelayOf, jitterOf } from './jitter';

describe('jitterOf', () => {
  it('is the same for a fire id every time, within [0, jitterMs)', () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => `42-${1767225600000 + i * 1000}`);
    const delays = ids.map((id) => jitterOf(id, 10_000));
    expect(ids.map((id) => jitterOf(id, 10_000))).toEqual(delays);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(10_000);
  });

  it('spreads fires across the whole range (each tenth of it gets some)', () => {
    const tenths = new Set(Array.from({ length: 1_000 }, (_, i) => Math.floor(jitterOf(`${i}-1767225600000`, 10_000) / 1_000)));
    expect(tenths.size).toBe(10);
  });

  it('is 0 without jitter', () => {
    expect(jitterOf('1-1', 0)).toBe(0);
    expect(jitterOf('1-1', 1)).toBe(0);
  });

  it("takes an autoSpread timer's stored offset for every fire instead of the fire id's jitter", () => {
    const ids = ['7-1767225600000', '7-1767225601000', '7-1767225602000'];
    expect(ids.map((id) => fireDelayOf(id, { jitterMs: 5_000, spreadOffsetMs: 3_000 }))).toEqual([3_000, 3_000, 3_000]);
    expect(ids.map((id) => fireDelayOf(id, { jitterMs: 5_000, spreadOffsetMs: 0 }))).toEqual([0, 0, 0]);
    // Without an offset (no autoSpread), or one the jitter no longer covers: the hash-derived jitter.
    expect(ids.map((id) => fireDelayOf(id, { jitterMs: 5_000, spreadOffsetMs: null }))).toEqual(ids.map((id) => jitterOf(id, 5_000)));
    expect(fireDelayOf(ids[0], { jitterMs: 2_000, spreadOffsetMs: 3_000 })).toBe(jitterOf(ids[0], 2_000));
    expect(fireDelayOf(ids[0], undefined)).toBe(0);
  });
});
