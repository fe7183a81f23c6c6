/**
 * Every Redis key of the service, by family, in one place (after BullMQ's `QueueKeys`): a new key is
 * added here, so two owners can never pick the same name and every key can be found from one file.
 * All keys start with the service prefix (`TIMER_REDIS_KEY_PREFIX`, default `timer:`).
 *
 * Slices: a slice is (minute, bucket), `minute` the epoch ms of a UTC minute start, `bucket` in
 * [0, buckets). The scheduler reads their keys; the trigger and the slice index write them
 * (`SliceStore` and `SliceIndex` are the only code that touches them).
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  /** ZSET of a slice's fires: score = runAt (epoch ms), member = the fire id. */
  slice(minute: number, bucket: number): string {
    return `${this.prefix}slice:${minute}:${bucket}`;
  }

  /** STRING: the bucket count of a minute, written once (SET NX): by the migrator from the minute's fires, else the default by its first user; read by everyone. */
  sliceBuckets(minute: number): string {
    return `${this.prefix}slice-buckets:${minute}`;
  }

  /**
   * Marker the trigger sets once a slice has been fully handled (every fire of the minute in that bucket
   * published and reconciled with MySQL). The scheduler never offers a slice whose marker exists.
   */
  sliceDone(minute: number, bucket: number): string {
    return `${this.prefix}slice-done:${minute}:${bucket}`;
  }

  /**
   * Marker of a whole minute: every bucket of `minute` is done. Set by the scheduler once it has seen
   * every bucket's {@link sliceDone}, so later ticks skip the minute with one EXISTS.
   */
  sliceDoneAll(minute: number): string {
    return `${this.prefix}slice-done-all:${minute}`;
  }

  /**
   * Resume point of a slice: epoch ms, the end of the last step whose task messages the broker
   * acknowledged. Written by the trigger after each step; a redelivered slice resumes there.
   */
  sliceCursor(minute: number, bucket: number): string {
    return `${this.prefix}slice-cursor:${minute}:${bucket}`;
  }

  /**
   * BITMAP: the bloom filter of a slice's settled fires (`SliceBloom`): a header (its size) then the
   * bits; written by the executor once a fire's outcome is durable, read before a look-up it can spare.
   */
  sliceBloom(minute: number): string {
    return `${this.prefix}slice-bloom:${minute}`;
  }

  /** STRING: the token of the holder of a lock (`RedisLock`, `extendLockToken`); resources in {@link LOCK_RESOURCES}. */
  lock(resource: string): string {
    return `${this.prefix}lock:${resource}`;
  }

  /** When the reconciler last re-published a fire (`RescueMarks`). */
  rescued(fireId: string): string {
    return `${this.prefix}rescued:${fireId}`;
  }

  /** A pending fire waiting in the broker after a fair-delivery hand-back (`RescueMarks`). */
  handedBack(fireId: string): string {
    return `${this.prefix}handed-back:${fireId}`;
  }

  /** HASH: app -> `<pausedAt>:<resumedAt or empty>:<writtenAt>` (epoch ms), the mirror of `apps.paused_at`/`resumed_at`. */
  pausedApps(): string {
    return `${this.prefix}paused-apps`;
  }

  /** HASH: app -> JSON array of the app's windows, the mirror of its `maintenance_windows` rows. */
  maintenanceWindows(): string {
    return `${this.prefix}maintenance-windows`;
  }

  /** The fire of a timer being delivered, for the overlap policies (`InFlightFires`). */
  inFlight(timerId: string): string {
    return `${this.prefix}in-flight:${timerId}`;
  }

  /** The one fire of a timer waiting for the one in flight (buffer_one; `InFlightFires`). */
  inFlightNext(timerId: string): string {
    return `${this.prefix}in-flight-next:${timerId}`;
  }

  /** BITMAP: which claims of an executor process started their callback, per chunk (`CallMarks`). */
  executorCalls(processId: string, chunk: number): string {
    return `${this.prefix}executor-calls:${processId}:${chunk}`;
  }

  /**
   * STRING: the claim token of the executor delivering a fire's first attempt, when first attempts are
   * claimed in Redis (`FireClaims`; TIMER_CLAIM_STORE=redis). Expires past any lease.
   */
  fireClaim(fireId: string): string {
    return `${this.prefix}claim:${fireId}`;
  }

  /** STRING, no TTL: a random value written once; found missing or changed, Redis lost the fires' claims (`FireClaims`). */
  claimEpoch(): string {
    return `${this.prefix}claim-epoch`;
  }

  /** An executor process's heartbeat: its claims may be taken over once it is gone. */
  executorAlive(processId: string): string {
    return `${this.prefix}executor-alive:${processId}`;
  }

  /** HASH: executor process -> `<lagMs>:<atMs>`, how late its recent calls started (`ExecutorLag`). */
  executorLag(): string {
    return `${this.prefix}executor-lag`;
  }

  /** HASH: trigger process -> `<slots>:<atMs>`, how many slices it walks at once (`TriggerSlots`). */
  triggerSlots(): string {
    return `${this.prefix}trigger-slots`;
  }

  /** A migrate range recorded done, with its counts (the migrator's split windows). */
  migrateRange(windowStart: number, windowEnd: number, fromTimerId: string, toTimerId: string): string {
    return `${this.prefix}migrate-range:${windowStart}:${windowEnd}:${fromTimerId}:${toTimerId}`;
  }

  /** The fixed-window counter of an app's api requests (the per-app rate limit). */
  rateLimit(app: string): string {
    return `${this.prefix}ratelimit:${app}`;
  }

  /** The fixed-window counter of failed authentications from one address. */
  authFailures(address: string): string {
    return `${this.prefix}authfail:${address}`;
  }
}

/** How long the slice done markers and cursors live: well beyond any scheduler lookback (max 24 h). */
export const SLICE_STATE_TTL_MS = 48 * 3_600_000;

/** The resources locked with `RedisLock` (each stored under {@link RedisKeys.lock}). */
export const LOCK_RESOURCES = {
  /**
   * A slice: the scheduler acquires it before offering the slice and puts the token in
   * `SliceMessage.lockToken`; the trigger extends and releases it.
   */
  slice: (minute: number, bucket: number): string => `slice:${minute}:${bucket}`,
  /** One migrator window's expansion. */
  migrateWindow: (windowStart: number): string => `migrate:${windowStart}`,
  /** The migrator's top-up of the prepared windows. */
  migrateTopUp: 'migrate:topup',
  /** One reconciler pass at a time across the migrators. */
  reconciler: 'reconciler',
} as const;
