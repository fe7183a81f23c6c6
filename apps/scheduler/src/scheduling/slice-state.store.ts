import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS, REDIS_KEY_PREFIX, SliceIndex, sliceDoneAllKey, sliceDoneKey } from '@timer/redis';

/** Done markers live as long as the trigger's (48 h), well beyond any lookback. */
export const DONE_ALL_TTL_MS = 48 * 3_600_000;

/** What the scheduler knows of one minute's slices. */
export interface MinuteState {
  minute: number;
  buckets: number;
  /** The minute's `slice-done-all` marker exists: every bucket is done. */
  allDone: boolean;
  /** Per bucket: its `slice-done` marker exists. Empty when `allDone`. */
  done: boolean[];
}

/** The scheduler's view of slice progress (Redis in production, a fake in unit tests). */
export interface SliceStateStore {
  /** Bucket count of each minute (recorded on first use, so every role partitions it the same way). */
  buckets(minutes: number[]): Promise<number[]>;
  /** Done markers of every bucket of the given minutes, in one round trip. */
  state(minutes: { minute: number; buckets: number }[]): Promise<MinuteState[]>;
  /** Records that every bucket of the minute is done, so later ticks check one key for it. */
  markMinuteDone(minute: number): Promise<void>;
}

@Injectable()
export class RedisSliceStateStore implements SliceStateStore {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_KEY_PREFIX) private readonly prefix: string,
    private readonly index: SliceIndex,
  ) {}

  /**
   * Uses `SliceIndex.buckets`: the recorded count, or the default recorded now (SET NX) for a minute
   * nothing indexed yet. Recording it matters: the trigger also reconciles with MySQL, so a minute with
   * rows but no index entry is walked all the same, and everyone must split it the same way.
   */
  buckets(minutes: number[]): Promise<number[]> {
    return Promise.all(minutes.map((m) => this.index.buckets(m)));
  }

  async state(minutes: { minute: number; buckets: number }[]): Promise<MinuteState[]> {
    if (minutes.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const { minute, buckets } of minutes) {
      pipeline.exists(sliceDoneAllKey(this.prefix, minute));
      for (let b = 0; b < buckets; b++) pipeline.exists(sliceDoneKey(this.prefix, minute, b));
    }
    const results = (await pipeline.exec()) ?? [];
    let i = 0;
    const next = (): boolean => {
      const [err, value] = results[i++] ?? [new Error('missing pipeline result'), null];
      if (err) throw err;
      return Number(value) === 1;
    };
    return minutes.map(({ minute, buckets }) => {
      const allDone = next();
      const done: boolean[] = [];
      for (let b = 0; b < buckets; b++) done.push(next());
      return { minute, buckets, allDone, done: allDone ? [] : done };
    });
  }

  async markMinuteDone(minute: number): Promise<void> {
    await this.redis.set(sliceDoneAllKey(this.prefix, minute), '1', 'PX', DONE_ALL_TTL_MS);
  }
}
