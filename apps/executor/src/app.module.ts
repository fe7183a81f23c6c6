import { DynamicModule, Module } from '@nestjs/common';
import { FireClaimRepository, FireOutcomeRepository, TimerDefinitionRepository } from '@timer/dal';
import { CLOCK, RoleConfig, systemClock } from '@timer/platform';
import { FireWriter, RoleRuntimeModule, TaskPublisher } from '@timer/runtime';
import { ExecutorConfig } from './config/executor.env';
import { AppShareGate } from './intake/app-share.gate';
import { DeliveryControlMetrics } from './delivery-control/delivery-control.metrics';
import { DeliveryControl } from './delivery-control/delivery-control.service';
import { AttemptOutcomes } from './settle/attempt-outcomes.service';
import { CallbackClientCloser, callbackClientProvider } from './call/callback.provider';
import { CallStarts } from './admit/call-starts.service';
import { ClaimBatcher } from './admit/claim-batcher.service';
import { ExecutorMetrics } from './shared/executor.metrics';
import { ExecutorLiveness } from './admit/executor-liveness.service';
import { FireAdmission } from './admit/fire-admission.service';
import { FireClaimer } from './admit/fire-claimer.service';
import { FireDelivery } from './call/fire-delivery.service';
import { OverlapGuard } from './call/overlap-guard.service';
import { FirePublisher } from './fire/fire-publisher';
import { FireLanes } from './intake/fire-lanes';
import { FireService } from './fire/fire.service';
import { IdleScavenge } from './shared/idle-scavenge.service';
import { InstantDiagnostics } from './shared/instant-diagnostics';
import { InstantSends } from './shared/instant-sends';
import { OutcomeRecorder } from './settle/outcome-recorder.service';
import { PauseWatch } from './shared/pause-watch.service';
import { MaintenanceWatch } from './call/maintenance-watch.service';
import { MaintenanceGate } from './call/maintenance-gate.service';
import { SettledFires } from './shared/settled-fires.service';
import { TaskHandler } from './fire/task.handler';
import { TimerCache } from './shared/timer-cache.service';

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
      imports: [RoleRuntimeModule.forRole(config)],
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
