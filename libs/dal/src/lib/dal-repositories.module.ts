import { Module } from '@nestjs/common';
import { AppRepository } from './repositories/app.repository';
import { IdempotencyKeyRepository } from './repositories/idempotency-key.repository';
import { TaskRepository } from './repositories/task.repository';
import { TimerVersionRepository } from './repositories/timer-version.repository';
import { TimerRepository } from './repositories/timer.repository';

/**
 * The repositories every role may use (timers and their versions, tasks, apps, idempotency keys) over
 * the TypeORM DataSource in scope (DalModule provides one and re-exports this module).
 */
@Module({
  providers: [TimerRepository, TimerVersionRepository, TaskRepository, AppRepository, IdempotencyKeyRepository],
  exports: [TimerRepository, TimerVersionRepository, TaskRepository, AppRepository, IdempotencyKeyRepository],
})
export class DalRepositoriesModule {}
