/**
 * The role-specific settings of every role (each role validates its own in `apps/<role>/src/config`).
 * Compose files and Helm ConfigMaps give all roles one environment, so a role must not report
 * another role's variable as a likely typo. Each role's env spec checks its names are listed here.
 */
export const ROLE_SPECIFIC_VARIABLES: readonly string[] = [
  // api
  'TIMER_ADMIN_TOKEN', 'TIMER_AUTH_DISABLED', 'TIMER_BODY_LIMIT_BYTES', 'TIMER_CALLBACK_BODY_MAX_BYTES',
  'TIMER_PREVIEW_COUNT', 'TIMER_RATE_LIMIT_PER_SEC',
  // api, migrator
  'TIMER_WINDOW_MINUTES',
  // migrator
  'TIMER_MIGRATOR_CATCHUP_MINUTES', 'TIMER_MIGRATOR_LOCK_LEASE_MS', 'TIMER_MIGRATOR_PAGE_SIZE', 'TIMER_MIGRATOR_TICK_MS',
  // scheduler, trigger
  'TIMER_SCHEDULER_LEAD_MS', 'TIMER_SCHEDULER_LOOKBACK_MINUTES', 'TIMER_SCHEDULER_TICK_MS', 'TIMER_SLICE_LEASE_MS',
  'TIMER_TRIGGER_CONCURRENCY', 'TIMER_TRIGGER_LEAD_MS', 'TIMER_TRIGGER_RECONCILE_MS', 'TIMER_TRIGGER_STEP_MS',
  // api, executor
  'TIMER_CALLBACK_ALLOW_PRIVATE',
  // executor
  'TIMER_CALLBACK_TIMEOUT_MS', 'TIMER_EXECUTOR_CACHE_TTL_MS', 'TIMER_EXECUTOR_CLAIM_LEASE_MS', 'TIMER_EXECUTOR_CONCURRENCY',
  'TIMER_EXECUTOR_FLUSH_MS', 'TIMER_EXECUTOR_MAX_EARLY_WAIT_MS', 'TIMER_EXECUTOR_PREFETCH_LIMIT', 'TIMER_EXECUTOR_PREFETCH_MS',
  'TIMER_MISFIRE_WINDOW_MS',
];
