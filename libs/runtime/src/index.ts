export { RoleRuntimeModule } from './lib/role-runtime.module';
export { DueFirePublisher, FireIndexer, FireRows, FireWriter, WrittenFires } from './lib/fire-writer';
export { TaskPublisher } from './lib/task-publisher';
