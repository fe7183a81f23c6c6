import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS, REDIS_KEY_PREFIX } from '@timer/redis';
import { ApiConfig } from '../config/api.env';

// Fixed one-second window per app, shared by every api replica: the first INCR of a window sets its
// expiry, in the same script so a crash cannot leave a counter without one.
const SCRIPT = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

const WINDOW_MS = 1000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (for Retry-After), at least 1. */
  retryAfterSec: number;
}

type RateRedis = Redis & { timerRateLimit(key: string, windowMs: number): Promise<[number, number]> };

/**
 * Per-app request budget (TIMER_RATE_LIMIT_PER_SEC, default 500/s). A Redis failure lets requests
 * through (logged at most every 10 s): the limit protects the service, it must not take it down.
 */
@Injectable()
export class RateLimiterService {
  private readonly logger = new Logger(RateLimiterService.name);
  private readonly redis: RateRedis;
  private lastWarn = 0;

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(REDIS_KEY_PREFIX) private readonly prefix: string,
    private readonly config: ApiConfig,
  ) {
    if (!('timerRateLimit' in redis)) redis.defineCommand('timerRateLimit', { numberOfKeys: 1, lua: SCRIPT });
    this.redis = redis as RateRedis;
  }

  get enabled(): boolean {
    return this.config.rateLimitPerSec > 0;
  }

  async take(app: string): Promise<RateDecision> {
    const limit = this.config.rateLimitPerSec;
    try {
      const [count, ttl] = await this.redis.timerRateLimit(`${this.prefix}ratelimit:${app}`, WINDOW_MS);
      return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), retryAfterSec: Math.max(1, Math.ceil(ttl / 1000)) };
    } catch (e) {
      const now = Date.now();
      if (now - this.lastWarn > 10_000) {
        this.lastWarn = now;
        this.logger.warn(`rate limit not enforced (Redis error): ${(e as Error).message}`);
      }
      return { allowed: true, limit, remaining: limit, retryAfterSec: 1 };
    }
  }
}
