import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { RoleConfig, RoleDependency } from '@timer/platform';
import { RedisHealthCheck } from './redis-health.check';
import { RedisKeys } from './redis-keys';
import { RedisLock } from './redis-lock';
import { REDIS, REDIS_KEY_PREFIX, SLICE_INDEX_OPTIONS } from './redis.tokens';
import { SliceIndex, SliceIndexOptions } from './slice-index';
import { SliceStore } from './slice-store';
import { RescueMarks } from './rescue-marks';
import { PausedApps } from './paused-apps';
import { InFlightFires } from './in-flight-fires';
import { MaintenanceWindows } from './maintenance-windows';
import { CallMarks } from './call-marks';
import { FireClaims } from './fire-claims';

/** The role's Redis client, lock, slice index, slice store and paused apps, configured from `TIMER_REDIS_*` and `TIMER_SLICE_BUCKETS*`. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [RoleConfig],
      // A bounded retry per command: a Redis outage fails callers quickly (they fall back to MySQL)
      // instead of queueing commands without limit. Auto-pipelining sends the commands of one event
      // loop turn in one write: the executor issues two per fire, thousands a second.
      useFactory: (config: RoleConfig) =>
        new Redis(config.redis.TIMER_REDIS_URL, {
          maxRetriesPerRequest: 2,
          enableOfflineQueue: true,
          enableAutoPipelining: true,
          connectionName: `timer-${config.role.name}`,
        }),
    },
    { provide: REDIS_KEY_PREFIX, inject: [RoleConfig], useFactory: (config: RoleConfig) => config.redis.TIMER_REDIS_KEY_PREFIX },
    { provide: RedisKeys, inject: [REDIS_KEY_PREFIX], useFactory: (p: string) => new RedisKeys(p) },
    { provide: RedisLock, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new RedisLock(r, p) },
    {
      provide: SliceIndex,
      inject: [REDIS, REDIS_KEY_PREFIX, RoleConfig, { token: SLICE_INDEX_OPTIONS, optional: true }],
      useFactory: (r: Redis, p: string, config: RoleConfig, options?: SliceIndexOptions) =>
        new SliceIndex(
          r,
          p,
          options ?? {
            defaultBuckets: config.redis.TIMER_SLICE_BUCKETS,
            bucketFires: config.redis.TIMER_SLICE_BUCKET_FIRES,
            maxBuckets: config.redis.TIMER_SLICE_BUCKETS_MAX,
          },
        ),
    },
    {
      provide: SliceStore,
      inject: [REDIS, REDIS_KEY_PREFIX, SliceIndex],
      useFactory: (r: Redis, p: string, index: SliceIndex) => new SliceStore(r, p, index),
    },
    { provide: RescueMarks, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new RescueMarks(r, p) },
    { provide: PausedApps, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new PausedApps(r, p) },
    { provide: MaintenanceWindows, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new MaintenanceWindows(r, p) },
    { provide: InFlightFires, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new InFlightFires(r, p) },
    { provide: CallMarks, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new CallMarks(r, p) },
    { provide: FireClaims, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new FireClaims(r, p) },
    RedisHealthCheck,
  ],
  exports: [REDIS, REDIS_KEY_PREFIX, RedisKeys, RedisLock, SliceIndex, SliceStore, RescueMarks, PausedApps, InFlightFires, MaintenanceWindows, CallMarks, FireClaims, RedisHealthCheck],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** What a role that depends on Redis is given (`RoleRuntimeModule.forRole`). */
export const REDIS_DEPENDENCY: RoleDependency = { module: RedisModule, check: RedisHealthCheck };
