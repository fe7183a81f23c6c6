import type { MinuteState } from '@timer/redis';

/** The scheduler's view of slice progress: `SliceStore` of `@timer/redis` in production, a fake in unit tests. */
export interface SliceStateStore {
  /** Bucket count of each minute (recorded on first use, so every role partitions it the same way). */
  buckets(minutes: number[]): Promise<number[]>;
  /** Done markers of every bucket of the given minutes, in one round trip. */
  state(minutes: { minute: number; buckets: number }[]): Promise<MinuteState[]>;
  /** Records that every bucket of the minute is done, so later ticks check one key for it. */
  markMinuteDone(minute: number): Promise<void>;
}
