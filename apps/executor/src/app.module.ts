import { DynamicModule, Module } from '@nestjs/common';
import { MYSQL_DEPENDENCY } from '@timer/dal';
import { RoleConfig, RoleRuntimeModule } from '@timer/platform';
import { PULSAR_DEPENDENCY } from '@timer/pulsar-transport';
import { REDIS_DEPENDENCY } from '@timer/redis';
import { AdmitModule } from './admit/admit.module';
import { CallModule } from './call/call.module';
import { ExecutorConfig } from './config/executor.env';
import { FirePublisher } from './fire/fire-publisher';
import { FireService } from './fire/fire.service';
import { TaskHandler } from './fire/task.handler';
import { IntakeModule } from './intake/intake.module';
import { SettleModule } from './settle/settle.module';
import { ExecutorSharedModule } from './shared/shared.module';

/**
 * The executor role: task messages -> intake -> admit -> call -> settle (docs/architecture.md,
 * "executor"). Each stage is a module of its own; this one holds the orchestrator and the one publisher
 * that sends anything back to the broker.
 */
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
      imports: [
        RoleRuntimeModule.forRole(config, { mysql: MYSQL_DEPENDENCY, redis: REDIS_DEPENDENCY, pulsar: PULSAR_DEPENDENCY }),
        ExecutorSharedModule.register(executor),
        IntakeModule,
        AdmitModule,
        CallModule,
        SettleModule,
      ],
      controllers: [TaskHandler],
      providers: [FirePublisher, FireService],
    };
  }
}
