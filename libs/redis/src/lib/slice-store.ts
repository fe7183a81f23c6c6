import type Redis from 'ioredis';
import { SliceMessage } from '@timer/contracts';
import { extendLockToken, LockTokenExtension, releaseLockToken } from './lock-token';
import { LOCK_RESOURCES, RedisKeys, SLICE_STATE_TTL_MS } from './redis-keys';
import { SliceIndex } from './slice-index';

/** What the scheduler knows of one minute's slices. */
export interface MinuteState {
  minute: number;
  buckets: number;
  /** The minute's `slice-done-all` marker exists: every bucket is done. */
  allDone: boolean;
  /** Per bucket: its `slice-done` marker exists. Empty when `allDone`. */
  done: boolean[];
}

/**
 * The progress of slices in Redis: done markers, cursors and the slice lock as the trigger holds it.
 * The scheduler reads it to decide what to offer; the trigger writes it while it walks. Methods throw
 * when Redis fails.
 */
export class SliceStore {
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly index: SliceIndex,
  ) {
    this.keys = new RedisKeys(prefix);
  }

  /**
   * Bucket count of each minute: the recorded count, or the default recorded now (SET NX) for a minute
   * nothing indexed yet. Recording it matters: the trigger also reconciles with MySQL, so a minute with
   * rows but no index entry is walked all the same, and everyone must split it the same way.
   */
  buckets(minutes: number[]): Promise<number[]> {
    return Promise.all(minutes.map((m) => this.index.buckets(m)));
  }

  /** Done markers of every bucket of the given minutes, in one round trip. */
  async state(minutes: { minute: number; buckets: number }[]): Promise<MinuteState[]> {
    if (minutes.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const { minute, buckets } of minutes) {
      pipeline.exists(this.keys.sliceDoneAll(minute));
      for (let b = 0; b < buckets; b++) pipeline.exists(this.keys.sliceDone(minute, b));
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

  /** Records that every bucket of the minute is done, so later ticks check one key for it. */
  async markMinuteDone(minute: number): Promise<void> {
    await this.redis.set(this.keys.sliceDoneAll(minute), '1', 'PX', SLICE_STATE_TTL_MS);
  }

  /** Extends the slice lock with the message's token (or takes it back when it expired and is free). */
  extend(slice: SliceMessage, ttlMs: number): Promise<LockTokenExtension> {
    // An expired lock nobody took (e.g. Redis restarted, or the lease ran out during a stall) is taken
    // back with the same token rather than abandoning the walk; never once the slice is done.
    return extendLockToken(this.redis, this.prefix, {
      resource: LOCK_RESOURCES.slice(slice.minute, slice.bucket),
      token: slice.lockToken,
      ttlMs,
      reclaimIfFree: true,
      unlessKeyExists: this.keys.sliceDone(slice.minute, slice.bucket),
    });
  }

  /** Token-checked release of the slice lock. */
  release(slice: SliceMessage): Promise<boolean> {
    return releaseLockToken(this.redis, this.prefix, LOCK_RESOURCES.slice(slice.minute, slice.bucket), slice.lockToken);
  }

  async readCursor(minute: number, bucket: number): Promise<number | null> {
    const value = await this.redis.get(this.keys.sliceCursor(minute, bucket));
    if (value === null) return null;
    const at = Number(value);
    return Number.isSafeInteger(at) ? at : null;
  }

  async writeCursor(minute: number, bucket: number, at: number): Promise<void> {
    await this.redis.set(this.keys.sliceCursor(minute, bucket), String(at), 'PX', SLICE_STATE_TTL_MS);
  }

  /**
   * Marks the slice done and drops its index entries in one MULTI. Nothing reads a done slice's sorted
   * set again (the scheduler never offers it, a late holder's extend is refused), and keeping it for
   * the index's 24 h retention holds every delivered fire's member in Redis memory (docs/scaling.md, "Storage").
   */
  async markDone(minute: number, bucket: number): Promise<void> {
    const results = await this.redis
      .multi()
      .set(this.keys.sliceDone(minute, bucket), '1', 'PX', SLICE_STATE_TTL_MS)
      .unlink(this.keys.slice(minute, bucket))
      .exec();
    const failed = results?.find(([err]) => err)?.[0];
    if (!results || failed) throw failed ?? new Error('MULTI of markDone aborted');
  }
}
