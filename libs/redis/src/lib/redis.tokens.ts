/** Injection token of the process's shared ioredis client. */
export const REDIS = Symbol('REDIS');
/** Injection token of the key prefix every key of this service carries. */
export const REDIS_KEY_PREFIX = Symbol('REDIS_KEY_PREFIX');
/** Optional injection token of SliceIndexOptions (bucket counts, retention); without it they come from `TIMER_SLICE_BUCKETS*`. */
export const SLICE_INDEX_OPTIONS = Symbol('SLICE_INDEX_OPTIONS');
