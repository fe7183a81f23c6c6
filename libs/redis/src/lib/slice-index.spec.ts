import type Redis from 'ioredis';
import { bucketsForFires, SliceIndex } from './slice-index';

describe('bucketsForFires', () => {
  const policy = { defaultBuckets: 10, bucketFires: 200, maxBuckets: 64 };

  it('keeps the default for a minute with fewer fires than one extra bucket takes', () => {
    expect(bucketsForFires(0, policy)).toBe(10);
    expect(bucketsForFires(1, policy)).toBe(10);
    expect(bucketsForFires(199, policy)).toBe(10);
  });

  it('adds one bucket per full bucketFires fires', () => {
    expect(bucketsForFires(200, policy)).toBe(11);
    expect(bucketsForFires(399, policy)).toBe(11);
    expect(bucketsForFires(450, policy)).toBe(12);
    expect(bucketsForFires(10_799, policy)).toBe(63);
  });

  it('stops at maxBuckets however many fires', () => {
    expect(bucketsForFires(10_800, policy)).toBe(64);
    expect(bucketsForFires(300_000, policy)).toBe(64);
    expect(bucketsForFires(Number.MAX_SAFE_INTEGER, policy)).toBe(64);
  });

  it('never grows with bucketFires 0, and a light minute costs one bucket when the default is 1', () => {
    expect(bucketsForFires(1_000_000, { ...policy, bucketFires: 0 })).toBe(10);
    expect(bucketsForFires(3, { defaultBuckets: 1, bucketFires: 200, maxBuckets: 64 })).toBe(1);
    expect(bucketsForFires(600, { defaultBuckets: 1, bucketFires: 200, maxBuckets: 64 })).toBe(4);
  });

  it('treats a negative count as none', () => {
    expect(bucketsForFires(-5, policy)).toBe(10);
  });
});

describe('SliceIndex bucket options', () => {
  const redis = {} as Redis;

  it('applies the options to bucketsFor; without a maximum a minute keeps the default', () => {
    expect(new SliceIndex(redis, 'p:', { maxBuckets: 64 }).bucketsFor(450)).toBe(12);
    expect(new SliceIndex(redis, 'p:').bucketsFor(1e9)).toBe(10);
    expect(new SliceIndex(redis, 'p:', { defaultBuckets: 2, bucketFires: 100, maxBuckets: 5 }).bucketsFor(250)).toBe(4);
    expect(new SliceIndex(redis, 'p:', { defaultBuckets: 100 }).bucketsFor(1e9)).toBe(100);
  });

  it('refuses a maximum below the default, and bad counts', () => {
    expect(() => new SliceIndex(redis, 'p:', { defaultBuckets: 10, maxBuckets: 9 })).toThrow(/maxBuckets/);
    expect(() => new SliceIndex(redis, 'p:', { maxBuckets: 10_001 })).toThrow(/maxBuckets/);
    expect(() => new SliceIndex(redis, 'p:', { defaultBuckets: 20 })).not.toThrow();
    expect(() => new SliceIndex(redis, 'p:', { bucketFires: -1 })).toThrow(/bucketFires/);
    expect(() => new SliceIndex(redis, 'p:', { bucketFires: 1.5 })).toThrow(/bucketFires/);
  });
});
