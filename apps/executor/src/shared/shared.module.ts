import { DynamicModule, Module, Provider } from '@nestjs/common';
import { FireClaimRepository, TimerDefinitionRepository } from '@timer/dal';
import { CLOCK, systemClock } from '@timer/platform';
import { REDIS, REDIS_KEY_PREFIX, SliceBloom } from '@timer/redis';
import type Redis from 'ioredis';
import { ExecutorConfig } from '../config/executor.env';
import { DeliveryControlMetrics } from '../delivery-control/delivery-control.metrics';
import { DeliveryControl } from '../delivery-control/delivery-control.service';
import { ExecutorMetrics } from './executor.metrics';
import { IdleScavenge } from './idle-scavenge.service';
import { InstantDiagnostics } from './instant-diagnostics';
import { InstantSends } from './instant-sends';
import { LagReport } from './lag-report.service';
import { PauseWatch } from './pause-watch.service';
import { SettledFires } from './settled-fires.service';
import { TimerCache } from './timer-cache.service';

/**
 * What more than one stage of the fire path uses: the executor's config and clock, metrics, the
 * definition cache, pauses, the per-app and per-origin delivery control, the due-instant bookkeeping.
 * Global, so each stage module lists only its own classes.
 */
@Module({})
export class ExecutorSharedModule {
  static register(executor: ExecutorConfig): DynamicModule {
    const shared: Provider[] = [
      { provide: ExecutorConfig, useValue: executor },
      { provide: CLOCK, useValue: systemClock },
      FireClaimRepository,
      TimerDefinitionRepository,
      ExecutorMetrics,
      InstantDiagnostics,
      InstantSends,
      TimerCache,
      {
        provide: SliceBloom,
        inject: [REDIS, REDIS_KEY_PREFIX],
        useFactory: (redis: Redis, prefix: string) => {
          const rate = executor.bloomFalsePositiveRate;
          return rate === null ? null : new SliceBloom(redis, prefix, { falsePositiveRate: rate });
        },
      },
      SettledFires,
      PauseWatch,
      DeliveryControlMetrics,
      DeliveryControl,
    ];
    return {
      module: ExecutorSharedModule,
      global: true,
      providers: [...shared, IdleScavenge, LagReport],
      exports: shared,
    };
  }
}
