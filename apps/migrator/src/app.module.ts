import { DynamicModule, Module } from '@nestjs/common';
import { LedgerRepository, MigratorWindowRepository, MYSQL_DEPENDENCY } from '@timer/dal';
import { CLOCK, loadConfig, MetricsService, RoleConfig, RoleRuntimeModule, systemClock } from '@timer/platform';
import { FireRegenerator, FireWriter, TaskPublisher } from '@timer/fire';
import { ExecutorLag, REDIS, REDIS_DEPENDENCY, REDIS_KEY_PREFIX, TriggerSlots } from '@timer/redis';
import type Redis from 'ioredis';
import { PULSAR_DEPENDENCY } from '@timer/pulsar-transport';
import { CompletionLoop } from './completion/completion.loop';
import { CompletionService } from './completion/completion.service';
import { MigratorConfig, MigratorEnv } from './config/migrator.env';
import { ExpansionPacer, LAG_SOURCE } from './migration/expansion-pacer';
import { MigratorLoop } from './migration/migrator.loop';
import { MigratorMetrics } from './migration/migrator.metrics';
import { MigratorService, RANGE_COORDINATION, TRIGGER_SLOTS } from './migration/migrator.service';
import { RangeCoordinator } from './migration/range-coordinator';
import { RangeHandler } from './migration/range.handler';
import { RetentionService } from './migration/retention.service';
import { ExecutorBacklog } from './reconcile/executor-backlog';
import { ReconcilerLoop } from './reconcile/reconciler.loop';
import { ReconcilerMetrics } from './reconcile/reconciler.metrics';
import { ReconcilerService } from './reconcile/reconciler.service';
import { FailureNotifierHandler } from './notifications/failure-notifier.handler';
import { FailureNotifierMetrics } from './notifications/failure-notifier.metrics';
import { DEFAULT_NOTIFIER_TIMING, FailureNotifier, NOTIFIER_TIMING } from './notifications/failure-notifier.service';
import { UndiciWebhookPoster, WebhookPoster } from './notifications/webhook-poster';

/**
 * The migrator role: expands enabled timers into task rows and the slice index, window by window;
 * large windows are split into ranges that every replica takes from `timer-migrate-ranges`; dead
 * letters are POSTed to their app's failure webhook (`failure-notifier` on `timer-tasks-dlq`).
 */
@Module({})
export class AppModule {
  /**
   * Validates the migrator's own variables (a bad one throws `ConfigError`, which stops the boot).
   * `env` is for tests; the process passes nothing and `loadConfig` reads the environment.
   */
  static register(config: RoleConfig, env?: NodeJS.ProcessEnv): DynamicModule {
    const migrator = new MigratorConfig(loadConfig(MigratorEnv, env));
    return {
      module: AppModule,
      imports: [RoleRuntimeModule.forRole(config, { mysql: MYSQL_DEPENDENCY, redis: REDIS_DEPENDENCY, pulsar: PULSAR_DEPENDENCY })],
      controllers: [RangeHandler, FailureNotifierHandler],
      providers: [
        { provide: MigratorConfig, useValue: migrator },
        { provide: CLOCK, useValue: systemClock },
        { provide: MigratorMetrics, inject: [MetricsService], useFactory: (m: MetricsService) => new MigratorMetrics(m.registry) },
        // The DataSource comes from DalModule (global, via RoleRuntimeModule).
        MigratorWindowRepository,
        TaskPublisher,
        FireWriter,
        FireRegenerator,
        RangeCoordinator,
        { provide: RANGE_COORDINATION, useExisting: RangeCoordinator },
        { provide: LAG_SOURCE, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new ExecutorLag(r, p) },
        { provide: TRIGGER_SLOTS, inject: [REDIS, REDIS_KEY_PREFIX], useFactory: (r: Redis, p: string) => new TriggerSlots(r, p) },
        ExpansionPacer,
        MigratorService,
        RetentionService,
        MigratorLoop,
        LedgerRepository,
        { provide: ReconcilerMetrics, inject: [MetricsService], useFactory: (m: MetricsService) => new ReconcilerMetrics(m.registry) },
        ExecutorBacklog,
        ReconcilerService,
        ReconcilerLoop,
        CompletionService,
        CompletionLoop,
        { provide: FailureNotifierMetrics, inject: [MetricsService], useFactory: (m: MetricsService) => new FailureNotifierMetrics(m.registry) },
        { provide: WebhookPoster, useFactory: () => new UndiciWebhookPoster(migrator.allowPrivateWebhooks) },
        { provide: NOTIFIER_TIMING, useValue: DEFAULT_NOTIFIER_TIMING },
        FailureNotifier,
      ],
    };
  }
}
