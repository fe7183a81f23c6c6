import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { LUA_SCRIPTS, REDIS, REDIS_KEY_PREFIX, RedisKeys } from '@timer/redis';

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
 * Fixed-window counters in Redis (keys from {@link RedisKeys}), shared by every api replica: the per-app rate
 * limit and the failed-authentication limit. A limit protects the service and must not take it down:
 * on a Redis error the calls answer `undefined` (the caller lets the request through) and a warning
 * per limit is logged at most every 10 s.
 */
@Injectable()
export class RedisWindowCounter {
  private readonly logger = new Logger(RedisWindowCounter.name);
  private readonly redis: WindowRedis;
  private readonly lastWarn = new Map<string, number>();
  /** The keys of the counters (`rateLimit`, `authFailures`). */
  readonly keys: RedisKeys;

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(REDIS_KEY_PREFIX) prefix: string,
  ) {
    this.keys = new RedisKeys(prefix);
    if (!('timerWindowIncr' in redis)) redis.defineCommand('timerWindowIncr', LUA_SCRIPTS.incrWindow);
    if (!('timerWindowPeek' in redis)) redis.defineCommand('timerWindowPeek', LUA_SCRIPTS.peekWindow);
    this.redis = redis as WindowRedis;
  }

  /**
   * Counts one more in the window of `key` (starting one of `windowMs` if none is running). `what`
   * names the limit in the warning when Redis fails.
   */
  incr(what: string, key: string, windowMs: number): Promise<WindowCount | undefined> {
    return this.guard(what, () => this.redis.timerWindowIncr(key, windowMs));
  }

  /** The count of `key` without changing it (0 when no window is running). */
  peek(what: string, key: string): Promise<WindowCount | undefined> {
    return this.guard(what, () => this.redis.timerWindowPeek(key));
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
