import { Module } from '@nestjs/common';
import { AppRepository } from './repositories/app.repository';
import { TaskRepository } from './repositories/task.repository';
import { TimerRepository } from './repositories/timer.repository';

/**
 * TimerRepository, TaskRepository and AppRepository over the TypeORM DataSource in scope
 * (DalModule provides one and re-exports this module).
 */
@Module({
  providers: [TimerRepository, TaskRepository, AppRepository],
  exports: [TimerRepository, TaskRepository, AppRepository],
})
export class DalRepositoriesModule {}
