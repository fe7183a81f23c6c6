import { DynamicModule, Module } from '@nestjs/common';
import { CLOCK, loadConfig, MetricsService, RoleConfig, RoleRuntimeModule, systemClock } from '@timer/platform';
import { REDIS_DEPENDENCY, SliceStore } from '@timer/redis';
import { PULSAR_DEPENDENCY } from '@timer/pulsar-transport';
import { SchedulerConfig, SchedulerEnv } from './config/scheduler.env';
import { SchedulerLoop } from './scheduling/scheduler.loop';
import { SchedulerMetrics } from './scheduling/scheduler.metrics';
import { SchedulerService } from './scheduling/scheduler.service';
import { SLICE_PUBLISHER, SLICE_STATE_STORE } from './scheduling/scheduler.tokens';
import { PulsarSlicePublisher } from './scheduling/slice.publisher';

/** The scheduler role: offers every not-done (minute, bucket) slice of the lookback to the triggers. */
@Module({})
export class AppModule {
  /**
   * Validates the scheduler's own variables (a bad one throws `ConfigError`, which stops the boot).
   * `env` is for tests; the process passes nothing and `loadConfig` reads the environment.
   */
  static register(config: RoleConfig, env?: NodeJS.ProcessEnv): DynamicModule {
    const scheduler = new SchedulerConfig(loadConfig(SchedulerEnv, env));
    return {
      module: AppModule,
      imports: [RoleRuntimeModule.forRole(config, { redis: REDIS_DEPENDENCY, pulsar: PULSAR_DEPENDENCY })],
      providers: [
        { provide: SchedulerConfig, useValue: scheduler },
        { provide: CLOCK, useValue: systemClock },
        { provide: SchedulerMetrics, inject: [MetricsService], useFactory: (m: MetricsService) => new SchedulerMetrics(m.registry) },
        // Redis, RedisLock, SliceStore and ClientPulsar come from the global modules of RoleRuntimeModule.
        { provide: SLICE_STATE_STORE, useExisting: SliceStore },
        { provide: SLICE_PUBLISHER, useClass: PulsarSlicePublisher },
        SchedulerService,
        SchedulerLoop,
      ],
    };
  }
}
