export { RoleRuntimeModule } from './lib/role-runtime.module';
export { businessCalendarOf, DueFirePublisher, FireIndexer, FireRows, FireWriter, TimerCalendars, WrittenFires } from './lib/fire-writer';
export { TaskPublisher } from './lib/task-publisher';
export { FireRegenerator, MAX_REGENERATED, Regeneration, RegenerateRange } from './lib/fire-regenerator';
