/**
 * Every Redis key of a slice's lifecycle, in one place (the scheduler reads them, the trigger and the
 * slice index write them; `SliceStore` and `SliceIndex` are the only code that touches them).
 * A slice is (minute, bucket): `minute` is the epoch ms of a UTC minute start, `bucket` in [0, buckets).
 */

/** How long the done markers and cursors live: well beyond any scheduler lookback (max 24 h). */
export const SLICE_STATE_TTL_MS = 48 * 3_600_000;

/** ZSET of a slice's fires: score = runAt (epoch ms), member = the fire id. */
export function sliceKey(prefix: string, minute: number, bucket: number): string {
  return `${prefix}slice:${minute}:${bucket}`;
}

/** STRING: the bucket count of a minute, written once (SET NX) by its first user, read by everyone. */
export function sliceBucketsKey(prefix: string, minute: number): string {
  return `${prefix}slice-buckets:${minute}`;
}

/**
 * Marker the trigger sets once a slice has been fully handled (every fire of the minute in that bucket
 * published and reconciled with MySQL). The scheduler never offers a slice whose marker exists.
 */
export function sliceDoneKey(prefix: string, minute: number, bucket: number): string {
  return `${prefix}slice-done:${minute}:${bucket}`;
}

/**
 * Marker of a whole minute: every bucket of `minute` is done. Set by the scheduler once it has seen
 * every bucket's `sliceDoneKey`, so later ticks skip the minute with one EXISTS.
 */
export function sliceDoneAllKey(prefix: string, minute: number): string {
  return `${prefix}slice-done-all:${minute}`;
}

/**
 * Resume point of a slice: epoch ms, the end of the last step whose task messages the broker
 * acknowledged. Written by the trigger after each step; a redelivered slice resumes there.
 */
export function sliceCursorKey(prefix: string, minute: number, bucket: number): string {
  return `${prefix}slice-cursor:${minute}:${bucket}`;
}

/**
 * RedisLock resource of a slice (RedisLock adds `${prefix}lock:`). The scheduler acquires it before
 * offering the slice and puts the token in SliceMessage.lockToken; the trigger extends and releases it.
 */
export function sliceLockResource(minute: number, bucket: number): string {
  return `slice:${minute}:${bucket}`;
}
