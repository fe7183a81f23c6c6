import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS, REDIS_KEY_PREFIX } from '@timer/redis';

// The first INCR of a window sets its expiry, in the same script so a crash cannot leave a counter
// without one.
const INCR = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

const PEEK = `
local n = redis.call('GET', KEYS[1])
if not n then return {0, 0} end
return {tonumber(n), redis.call('PTTL', KEYS[1])}`;

type WindowRedis = Redis & {
  timerWindowIncr(key: string, windowMs: number): Promise<[number, number]>;
  timerWindowPeek(key: string): Promise<[number, number]>;
};

/** A counter's value in its current window, and the milliseconds until the window ends. */
export interface WindowCount {
  count: number;
  ttlMs: number;
}

/** Seconds to put in `Retry-After` for a window that ends in `ttlMs`: at least 1. */
export const retryAfterSec = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs / 1000));

/**
 * Fixed-window counters in Redis (`<prefix><name>`), shared by every api replica: the per-app rate
 * limit and the failed-authentication limit. A limit protects the service and must not take it down:
 * on a Redis error the calls answer `undefined` (the caller lets the request through) and a warning
 * per limit is logged at most every 10 s.
 */
@Injectable()
export class RedisWindowCounter {
  private readonly logger = new Logger(RedisWindowCounter.name);
  private readonly redis: WindowRedis;
  private readonly lastWarn = new Map<string, number>();

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(REDIS_KEY_PREFIX) private readonly prefix: string,
  ) {
    if (!('timerWindowIncr' in redis)) redis.defineCommand('timerWindowIncr', { numberOfKeys: 1, lua: INCR });
    if (!('timerWindowPeek' in redis)) redis.defineCommand('timerWindowPeek', { numberOfKeys: 1, lua: PEEK });
    this.redis = redis as WindowRedis;
  }

  /**
   * Counts one more in the window of `name` (starting one of `windowMs` if none is running). `what`
   * names the limit in the warning when Redis fails.
   */
  incr(what: string, name: string, windowMs: number): Promise<WindowCount | undefined> {
    return this.guard(what, () => this.redis.timerWindowIncr(this.prefix + name, windowMs));
  }

  /** The count of `name` without changing it (0 when no window is running). */
  peek(what: string, name: string): Promise<WindowCount | undefined> {
    return this.guard(what, () => this.redis.timerWindowPeek(this.prefix + name));
  }

  private async guard(what: string, call: () => Promise<[number, number]>): Promise<WindowCount | undefined> {
    try {
      const [count, ttlMs] = await call();
      return { count, ttlMs };
    } catch (e) {
      const now = Date.now();
      if (now - (this.lastWarn.get(what) ?? 0) > 10_000) {
        this.lastWarn.set(what, now);
        this.logger.warn(`${what} not enforced (Redis error): ${(e as Error).message}`);
      }
      return undefined;
    }
  }
}
