/** Injection token of the process's shared ioredis client. */
export const REDIS = Symbol('REDIS');
/** Injection token of the key prefix every key of this service carries. */
export const REDIS_KEY_PREFIX = Symbol('REDIS_KEY_PREFIX');
/** Optional injection token of SliceIndexOptions (bucket count, retention); defaults apply without it. */
export const SLICE_INDEX_OPTIONS = Symbol('SLICE_INDEX_OPTIONS');
