import type Redis from 'ioredis';
import type { MaintenanceWindow } from '@timer/schedule';
import { RedisKeys } from './redis-keys';

/** How often every executor re-reads the windows: a new window reaches the executors within this. */
export const MAINTENANCE_REFRESH_MS = 1_000;

/**
 * The maintenance windows in Redis (`maintenanceWindows`, {@link RedisKeys}), which every executor reads every
 * {@link MAINTENANCE_REFRESH_MS}. The api rewrites an app's entry from MySQL after each create or
 * delete (the whole app at once, so a retry or a race ends in what MySQL has). The one owner of the key.
 */
export class MaintenanceWindows {
  readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = new RedisKeys(prefix).maintenanceWindows();
  }

  /** Makes the app's entry `windows` (none: the entry is removed). */
  async set(app: string, windows: readonly MaintenanceWindow[]): Promise<void> {
    if (windows.length === 0) await this.redis.hdel(this.key, app);
    else await this.redis.hset(this.key, app, JSON.stringify(windows));
  }

  /** Every app's windows (entries that do not parse are left out). */
  async read(): Promise<Map<string, MaintenanceWindow[]>> {
    const all = await this.redis.hgetall(this.key);
    const out = new Map<string, MaintenanceWindow[]>();
    for (const [app, value] of Object.entries(all)) {
      try {
        const parsed = JSON.parse(value) as unknown;
        if (Array.isArray(parsed)) out.set(app, parsed as MaintenanceWindow[]);
      } catch {
        // a foreign value: not ours to interpret
      }
    }
    return out;
  }
}
