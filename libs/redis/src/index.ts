export { REDIS, REDIS_KEY_PREFIX } from './lib/redis.tokens';
export { HeldLock, LockOptions, RedisLock } from './lib/redis-lock';
export { BloomFilter, BloomFilterOptions, DEFAULT_BLOOM } from './lib/bloom-filter';
export { RedisHealthCheck } from './lib/redis-health.check';
export { RedisModule } from './lib/redis.module';
