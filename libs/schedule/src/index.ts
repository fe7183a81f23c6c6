export {
  DEFAULT_FIRE_LIMIT,
  fireTimesBetween,
  formatInterval,
  MAX_CRON_FIRES,
  MAX_CRON_LENGTH,
  MAX_EVERY_MS,
  MAX_FIRES,
  MAX_INSTANT_MS,
  MIN_EVERY_MS,
  nextFireTimes,
  nthFireTime,
  parseInterval,
  PREVIEW_HORIZON_MS,
  ScheduleError,
  ScheduleField,
  ScheduleSpec,
  specOf,
  StoredSchedule,
  validateSchedule,
} from './lib/schedule';
export { isKnownTimeZone } from './lib/zone-clock';
export { previousFireTime } from './lib/previous-fire';
