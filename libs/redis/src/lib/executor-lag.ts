import type Redis from 'ioredis';
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
export class ExecutorLag {
  readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = new RedisKeys(prefix).executorLag();
  }

  /** Records `lagMs` as the lag of `processId` at `atMs`. */
  async report(processId: string, lagMs: number, atMs: number): Promise<void> {
    await this.redis.hset(this.key, processId, `${Math.max(0, Math.round(lagMs))}:${Math.round(atMs)}`);
  }

  /** Removes the report of a process that stops. */
  async remove(processId: string): Promise<void> {
    await this.redis.hdel(this.key, processId);
  }

  /**
   * The largest lag reported within {@link EXECUTOR_LAG_FRESH_MS} of `nowMs`, or null when no executor
   * reported that recently. Deletes the reports older than {@link EXECUTOR_LAG_FORGET_MS}.
   */
  async current(nowMs: number): Promise<number | null> {
    const reports = await this.redis.hgetall(this.key);
    let lag: number | null = null;
    const forgotten: string[] = [];
    for (const [processId, value] of Object.entries(reports)) {
      const [ms, at] = value.split(':').map(Number);
      if (!Number.isFinite(ms) || !Number.isFinite(at) || nowMs - at > EXECUTOR_LAG_FORGET_MS) forgotten.push(processId);
      else if (nowMs - at <= EXECUTOR_LAG_FRESH_MS) lag = Math.max(lag ?? 0, ms);
    }
    if (forgotten.length > 0) await this.redis.hdel(this.key, ...forgotten);
    return lag;
  }
}
