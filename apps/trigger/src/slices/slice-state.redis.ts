import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { SliceMessage } from '@timer/contracts';
import {
  extendLockToken,
  LockTokenExtension,
  REDIS,
  REDIS_KEY_PREFIX,
  releaseLockToken,
  sliceCursorKey,
  sliceDoneKey,
  sliceLockResource,
} from '@timer/redis';
import { SliceState } from './slice-walker';

/** How long the done marker and the cursor of a slice live (beyond the scheduler's lookback). */
export const SLICE_STATE_TTL_MS = 48 * 3_600_000;

/** The slice's lock, cursor and done marker in Redis. Methods throw when Redis fails. */
@Injectable()
export class RedisSliceState implements SliceState {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_KEY_PREFIX) private readonly prefix: string,
  ) {}

  extend(slice: SliceMessage, ttlMs: number): Promise<LockTokenExtension> {
    // An expired lock nobody took (e.g. Redis restarted, or the lease ran out during a stall) is taken
    // back with the same token rather than abandoning the walk; never once the slice is done.
    return extendLockToken(this.redis, this.prefix, {
      resource: sliceLockResource(slice.minute, slice.bucket),
      token: slice.lockToken,
      ttlMs,
      reclaimIfFree: true,
      unlessKeyExists: sliceDoneKey(this.prefix, slice.minute, slice.bucket),
    });
  }

  async readCursor(minute: number, bucket: number): Promise<number | null> {
    const value = await this.redis.get(sliceCursorKey(this.prefix, minute, bucket));
    if (value === null) return null;
    const at = Number(value);
    return Number.isSafeInteger(at) ? at : null;
  }

  async writeCursor(minute: number, bucket: number, at: number): Promise<void> {
    await this.redis.set(sliceCursorKey(this.prefix, minute, bucket), String(at), 'PX', SLICE_STATE_TTL_MS);
  }

  async markDone(minute: number, bucket: number): Promise<void> {
    await this.redis.set(sliceDoneKey(this.prefix, minute, bucket), '1', 'PX', SLICE_STATE_TTL_MS);
  }

  release(slice: SliceMessage): Promise<boolean> {
    return releaseLockToken(this.redis, this.prefix, sliceLockResource(slice.minute, slice.bucket), slice.lockToken);
  }
}
