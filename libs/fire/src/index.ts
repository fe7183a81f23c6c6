export { businessCalendarOf, DueFirePublisher, FireIndexer, FireRows, FireWriter, TimerCalendars, WrittenFires } from './lib/fire-writer';
export { TaskPublisher } from './lib/task-publisher';
export { taskBatchRecord, taskMessage, TaskMessageOptions, taskRecord } from './lib/task-messages';
export { FireRegenerator, MAX_REGENERATED, Regeneration, RegenerateRange } from './lib/fire-regenerator';
