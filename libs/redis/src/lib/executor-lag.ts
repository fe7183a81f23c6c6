import type Redis from 'ioredis';
import { ProcessReports } from './process-reports';
import { RedisKeys } from './redis-keys';

/** A report older than this is of an executor that stopped or stalls: it no longer speaks for the lag. */
export const EXECUTOR_LAG_FRESH_MS = 5_000;
/** A report older than this is deleted by the next reader (the executor died without removing it). */
export const EXECUTOR_LAG_FORGET_MS = 10 * 60_000;

/**
 * How late the executors start their due fires: each executor process writes, about every second, how
 * late the calls it started meanwhile were (`executorLag` in {@link RedisKeys}, a hash field per
 * process); the migrator reads the largest fresh figure to pace its expansion (docs/scaling.md,
 * "Expansion beside delivery"). The one owner of the key.
 */
export class ExecutorLag extends ProcessReports {
  constructor(redis: Redis, prefix: string) {
    super(redis, new RedisKeys(prefix).executorLag(), EXECUTOR_LAG_FRESH_MS, EXECUTOR_LAG_FORGET_MS);
  }

  /**
   * The largest lag reported within {@link EXECUTOR_LAG_FRESH_MS} of `nowMs`, or null when no executor
   * reported that recently. Deletes the reports older than {@link EXECUTOR_LAG_FORGET_MS}.
   */
  async current(nowMs: number): Promise<number | null> {
    const lags = await this.fresh(nowMs);
    return lags.length === 0 ? null : Math.max(...lags);
  }
}
