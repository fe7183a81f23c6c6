import { Module } from '@nestjs/common';
import { AppRepository } from './repositories/app.repository';
import { BackfillRepository } from './repositories/backfill.repository';
import { DeadLetterRepository } from './repositories/dead-letter.repository';
import { IdempotencyKeyRepository } from './repositories/idempotency-key.repository';
import { TaskRepository } from './repositories/task.repository';
import { TimerVersionRepository } from './repositories/timer-version.repository';
import { TimerRepository } from './repositories/timer.repository';

/**
 * The repositories every role may use (timers and their versions, tasks, apps, idempotency keys) over
 * the TypeORM DataSource in scope (DalModule provides one and re-exports this module).
 */
@Module({
  providers: [BackfillRepository, TimerRepository, TimerVersionRepository, TaskRepository, AppRepository, IdempotencyKeyRepository, DeadLetterRepository],
  exports: [BackfillRepository, TimerRepository, TimerVersionRepository, TaskRepository, AppRepository, IdempotencyKeyRepository, DeadLetterRepository],
})
export class DalRepositoriesModule {}
