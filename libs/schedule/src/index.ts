export {
  DEFAULT_FIRE_LIMIT,
  fireTimesBetween,
  MAX_CRON_LENGTH,
  nextFireTimes,
  PREVIEW_HORIZON_MS,
  ScheduleError,
  ScheduleSpec,
  specOf,
  validateSchedule,
} from './lib/schedule';
export { isKnownTimeZone } from './lib/zone-clock';
