import { DynamicModule, Module } from '@nestjs/common';
import { FireClaimRepository, FireOutcomeRepository, MYSQL_DEPENDENCY, TimerDefinitionRepository } from '@timer/dal';
import { CLOCK, RoleConfig, RoleRuntimeModule, systemClock } from '@timer/platform';
import { FireWriter, TaskPublisher } from '@timer/fire';
import { REDIS_DEPENDENCY } from '@timer/redis';
import { PULSAR_DEPENDENCY } from '@timer/pulsar-transport';
import { ExecutorConfig } from './config/executor.env';
import { AppShareGate } from './delivery-control/app-share.gate';
import { DeliveryControlMetrics } from './delivery-control/delivery-control.metrics';
import { DeliveryControl } from './delivery-control/delivery-control.service';
import { AttemptOutcomes } from './fire/attempt-outcomes.service';
import { CallbackClientCloser, callbackClientProvider } from './fire/callback.provider';
import { CallStarts } from './fire/call-starts.service';
import { ClaimBatcher } from './fire/claim-batcher.service';
import { ExecutorMetrics } from './fire/executor.metrics';
import { ExecutorLiveness } from './fire/executor-liveness.service';
import { FireAdmission } from './fire/fire-admission.service';
import { FireClaimer } from './fire/fire-claimer.service';
import { FireDelivery } from './fire/fire-delivery.service';
import { ResultWebhooks } from './fire/result-webhooks.service';
import { OverlapGuard } from './fire/overlap-guard.service';
import { FirePublisher } from './fire/fire-publisher';
import { FireLanes } from './fire/fire-lanes';
import { FireService } from './fire/fire.service';
import { IdleScavenge } from './fire/idle-scavenge.service';
import { InstantDiagnostics } from './fire/instant-diagnostics';
import { InstantSends } from './fire/instant-sends';
import { OutcomeRecorder } from './fire/outcome-recorder.service';
import { PauseWatch } from './fire/pause-watch.service';
import { MaintenanceWatch } from './fire/maintenance-watch.service';
import { MaintenanceGate } from './fire/maintenance-gate.service';
import { SettledFires } from './fire/settled-fires.service';
import { TaskHandler } from './fire/task.handler';
import { TimerCache } from './fire/timer-cache.service';

/** The executor role: task messages -> claim -> callback -> recorded outcome (docs/architecture.md). */
@Module({})
export class AppModule {
  /**
   * Validates the executor's own variables (a bad one throws `ConfigError`, which stops the boot) and
   * builds the module. `env` is for tests; the process passes nothing and the environment is read.
   */
  static register(config: RoleConfig, env?: NodeJS.ProcessEnv): DynamicModule {
    const executor = ExecutorConfig.load(env);
    return {
      module: AppModule,
      imports: [RoleRuntimeModule.forRole(config, { mysql: MYSQL_DEPENDENCY, redis: REDIS_DEPENDENCY, pulsar: PULSAR_DEPENDENCY })],
      controllers: [TaskHandler],
      providers: [
        { provide: ExecutorConfig, useValue: executor },
        { provide: CLOCK, useValue: systemClock },
        FireClaimRepository,
        FireOutcomeRepository,
        TimerDefinitionRepository,
        ExecutorMetrics,
        InstantDiagnostics,
        InstantSends,
        TimerCache,
        OutcomeRecorder,
        ClaimBatcher,
        FirePublisher,
        callbackClientProvider,
        CallbackClientCloser,
        SettledFires,
        ExecutorLiveness,
        CallStarts,
        PauseWatch,
        MaintenanceWatch,
        MaintenanceGate,
        TaskPublisher,
        FireWriter,
        FireClaimer,
        FireAdmission,
        AttemptOutcomes,
        OverlapGuard,
        FireDelivery,
        ResultWebhooks,
        FireLanes,
        FireService,
        DeliveryControlMetrics,
        DeliveryControl,
        AppShareGate,
        IdleScavenge,
      ],
    };
  }
}
