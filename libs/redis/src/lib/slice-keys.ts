/**
 * Keys shared by the scheduler (reads) and the trigger (writes) for the per-slice lifecycle.
 * A slice is (minute, bucket): `minute` is the epoch ms of a UTC minute start, `bucket` in [0, buckets).
 */

/**
 * Marker the trigger sets (with an expiry, e.g. the slice index retention) once a slice has been
 * fully handled (every fire of the minute in that bucket published and reconciled with MySQL).
 * The scheduler never offers a slice whose marker exists.
 */
export function sliceDoneKey(prefix: string, minute: number, bucket: number): string {
  return `${prefix}slice-done:${minute}:${bucket}`;
}

/**
 * Optional marker of a whole minute: every bucket of `minute` is done. Set by the scheduler once it has
 * seen every bucket's `sliceDoneKey`, so later ticks skip the minute with one EXISTS.
 */
export function sliceDoneAllKey(prefix: string, minute: number): string {
  return `${prefix}slice-done-all:${minute}`;
}

/**
 * RedisLock resource of a slice (RedisLock adds `${prefix}lock:`). The scheduler acquires it before
 * offering the slice and puts the token in SliceMessage.lockToken; the trigger extends and releases it.
 */
export function sliceLockResource(minute: number, bucket: number): string {
  return `slice:${minute}:${bucket}`;
}
