export { REDIS, REDIS_KEY_PREFIX, SLICE_INDEX_OPTIONS } from './lib/redis.tokens';
export { HeldLock, LockOptions, RedisLock } from './lib/redis-lock';
export { SliceIndex, SliceIndexOptions } from './lib/slice-index';
export { MinuteState, SliceStore } from './lib/slice-store';
export { RescueMarks } from './lib/rescue-marks';
export { InFlightFires, OverlapTurn } from './lib/in-flight-fires';
export { CALL_MARKS_CHUNK, CallMarks, CallStart } from './lib/call-marks';
export { inPause, LedgerPause, PAUSE_WRITE_TRUST_MS, PAUSED_APPS_REFRESH_MS, PausedApps, pausedAppsKey, PauseState, RESUME_MARGIN_MS } from './lib/paused-apps';
export { MAINTENANCE_REFRESH_MS, MaintenanceWindows, maintenanceWindowsKey } from './lib/maintenance-windows';
export { RedisHealthCheck } from './lib/redis-health.check';
export { REDIS_DEPENDENCY, RedisModule } from './lib/redis.module';
export {
  SLICE_STATE_TTL_MS,
  sliceBucketsKey,
  sliceCursorKey,
  sliceDoneAllKey,
  sliceDoneKey,
  sliceKey,
  sliceLockResource,
} from './lib/slice-keys';
export { extendLockToken, ExtendLockTokenOptions, LockTokenExtension, lockTokenKey, releaseLockToken } from './lib/lock-token';
