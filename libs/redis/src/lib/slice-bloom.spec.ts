import { BLOOM_MAX_BITS, BLOOM_MIN_FIRES, bloomFalsePositiveRate, bloomSize, murmur3, packHashes, SliceBloom } from './slice-bloom';

describe('bloomSize', () => {
  it('gives the textbook geometry: 1 % at 1 million items is 9,585,059 bits (1.14 MiB) and 7 hashes', () => {
    expect(bloomSize(1_000_000, 0.01)).toEqual({ fires: 1_000_000, bits: 9_585_059, hashes: 7 });
  });

  it('gives ~1.44 log2(1/p) bits an item and k = (m/n) ln 2, rounded', () => {
    for (const p of [0.1, 0.01, 0.001, 0.0001]) {
      const s = bloomSize(100_000, p);
      expect(s.bits / 100_000).toBeCloseTo(1.4427 * Math.log2(1 / p), 2);
      expect(s.hashes).toBe(Math.round((s.bits / 100_000) * Math.LN2));
    }
    expect(bloomSize(100_000, 0.1).hashes).toBe(3);
    expect(bloomSize(100_000, 0.001).hashes).toBe(10);
  });

  it('meets the stated rate at its capacity (within rounding of k)', () => {
    for (const p of [0.05, 0.01, 0.001]) {
      const s = bloomSize(50_000, p);
      const rate = bloomFalsePositiveRate(s.bits, s.hashes, s.fires);
      expect(rate).toBeLessThan(p * 1.1);
      expect(rate).toBeGreaterThan(p * 0.8);
    }
  });

  it('sizes small or unknown slices for BLOOM_MIN_FIRES, caps m below 2^32 bits, and refuses a rate outside (0, 1)', () => {
    expect(bloomSize(0, 0.01).fires).toBe(BLOOM_MIN_FIRES);
    expect(bloomSize(Number.NaN, 0.01).fires).toBe(BLOOM_MIN_FIRES);
    expect(bloomSize(10, 0.01)).toEqual(bloomSize(BLOOM_MIN_FIRES, 0.01));
    expect(bloomSize(1e12, 0.01).bits).toBe(BLOOM_MAX_BITS);
    for (const bad of [0, 1, -0.1, Number.NaN]) expect(() => bloomSize(1_000, bad)).toThrow(RangeError);
  });
});

describe('hashing', () => {
  it('is MurmurHash3 x86 32 (reference vectors)', () => {
    expect(murmur3('', 0)).toBe(0);
    expect(murmur3('', 1)).toBe(0x514e28b7);
    expect(murmur3('abc', 0)).toBe(0xb3dd93fa);
    expect(murmur3('Hello, world!', 1234)).toBe(0xfaf6cdb3);
    expect(murmur3('The quick brown fox jumps over the lazy dog', 0x9747b28c)).toBe(0x2fa826cd);
  });

  it('packs two hashes an item, the second odd', () => {
    const buf = packHashes(['7-1700000000000', '8-1700000000000']);
    expect(buf.length).toBe(16);
    expect(buf.readUInt32BE(4) % 2).toBe(1);
    expect(buf.readUInt32BE(12) % 2).toBe(1);
    expect(buf.readUInt32BE(0)).not.toBe(buf.readUInt32BE(8));
  });
});

describe('SliceBloom.sliceOf', () => {
  it("is the start of the time's UTC minute", () => {
    expect(SliceBloom.sliceOf(1_700_000_099_999)).toBe(1_700_000_040_000);
    expect(SliceBloom.sliceOf(1_700_000_040_000)).toBe(1_700_000_040_000);
  });
});
