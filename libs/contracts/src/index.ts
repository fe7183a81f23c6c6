export { BATCHED_TOPICS, CATCH_UP_AFTER_MS, SUBSCRIPTION_INITIAL_POSITION, SUBSCRIPTIONS, TopicKey, taskTopicOf, TOPICS, TOPOLOGY } from './lib/topics';
export {
  MAX_ATTEMPT,
  MAX_BUCKETS,
  MAX_TASKS_PER_MESSAGE,
  MigrateRangeMessage,
  Parsed,
  parseMigrateRangeMessage,
  parseSliceMessage,
  parseTaskMessage,
  parseTaskPayload,
  SliceMessage,
  TaskBatchMessage,
  taskBatchOf,
  taskBatchPropertiesOf,
  TaskMessage,
  TopicPayloads,
  TRACEPARENT_PATTERN,
} from './lib/messages';
export { FireRef, fireId, fireIdPrefix, formatFireId, isTimerId, parseFireId } from './lib/fire-ref';
export { MESSAGE_PROPERTIES } from './lib/properties';
export { DEFAULT_WINDOW_MINUTES, isMinuteStart, MINUTE_MS, minuteOf, NEAR_NOW_MS, preparedWindows, Window, windowOf, WINDOWS_AHEAD } from './lib/time';
export { FAILURE_NOTIFICATIONS_PER_POST, FailureNotification, FailureNotificationBatch, FailureNotificationKind, MISSED_REASONS_NOTIFIED } from './lib/failure-notification';
export { FIRE_STATUS_CHOICES, FIRE_STATUS_DESCRIPTION, FIRE_STATUS_VALUES, FIRE_STATUSES, FireStatus, FireStatusName, FireStatusValue } from './lib/fire-status';
