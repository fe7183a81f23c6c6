import { DynamicModule, Module } from '@nestjs/common';
import { MYSQL_DEPENDENCY, SliceTaskRepository } from '@timer/dal';
import { CLOCK, Clock, loadConfig, MetricsService, RoleConfig, RoleRuntimeModule, systemClock } from '@timer/platform';
import { REDIS_DEPENDENCY, SliceIndex, SliceStore } from '@timer/redis';
import { TaskPublisher } from '@timer/fire';
import { PULSAR_DEPENDENCY } from '@timer/pulsar-transport';
import { TriggerConfig, TriggerEnv } from './config/trigger.env';
import { SliceWalker } from './slices/slice-walker';
import { SlicesHandler } from './slices/slices.handler';
import { SlicesService } from './slices/slices.service';
import { SlotsReport } from './slices/slots-report';
import { TriggerMetrics } from './slices/trigger.metrics';

/** The trigger role: walks slices from `timer-slices` and publishes their fires on `timer-tasks`. */
@Module({})
export class AppModule {
  /**
   * Validates the trigger's own variables (a bad one throws `ConfigError`, which stops the boot) and
   * builds the module. `env` is for tests; the process passes nothing and `loadConfig` reads the environment.
   */
  static register(config: RoleConfig, env?: NodeJS.ProcessEnv): DynamicModule {
    const trigger = new TriggerConfig(loadConfig(TriggerEnv, env));
    return {
      module: AppModule,
      imports: [RoleRuntimeModule.forRole(config, { mysql: MYSQL_DEPENDENCY, redis: REDIS_DEPENDENCY, pulsar: PULSAR_DEPENDENCY })],
      controllers: [SlicesHandler],
      providers: [
        { provide: TriggerConfig, useValue: trigger },
        { provide: CLOCK, useValue: systemClock },
        { provide: TriggerMetrics, inject: [MetricsService], useFactory: (m: MetricsService) => new TriggerMetrics(m.registry) },
        // Not in DalRepositoriesModule: provided here over the DataSource DalModule opens.
        SliceTaskRepository,
        TaskPublisher,
        {
          provide: SliceWalker,
          inject: [TriggerConfig, CLOCK, SliceStore, SliceIndex, SliceTaskRepository, TaskPublisher, TriggerMetrics],
          useFactory: (
            c: TriggerConfig,
            clock: Clock,
            state: SliceStore,
            index: SliceIndex,
            mysql: SliceTaskRepository,
            publisher: TaskPublisher,
            metrics: TriggerMetrics,
          ) =>
            new SliceWalker(
              { clock, state, index, mysql, publisher, metrics },
              { stepMs: c.stepMs, leadMs: c.leadMs, reconcileMs: c.reconcileMs, leaseMs: c.leaseMs, batchMax: c.batchMax },
            ),
        },
        SlicesService,
        SlotsReport,
      ],
    };
  }
}
