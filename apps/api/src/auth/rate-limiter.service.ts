import { Injectable } from '@nestjs/common';
import { ApiConfig } from '../config/api.env';
import { RedisWindowCounter, retryAfterSec } from './redis-window';

const WINDOW_MS = 1000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (for Retry-After), at least 1. */
  retryAfterSec: number;
}

/**
 * Per-app request budget (TIMER_RATE_LIMIT_PER_SEC, default 500/s): a fixed one-second window per
 * app (`<prefix>ratelimit:<app>`), shared by every api replica. A Redis failure lets requests through.
 */
@Injectable()
export class RateLimiterService {
  constructor(
    private readonly windows: RedisWindowCounter,
    private readonly config: ApiConfig,
  ) {}

  get enabled(): boolean {
    return this.config.rateLimitPerSec > 0;
  }

  async take(app: string): Promise<RateDecision> {
    const limit = this.config.rateLimitPerSec;
    const w = await this.windows.incr('rate limit', this.windows.keys.rateLimit(app), WINDOW_MS);
    if (!w) return { allowed: true, limit, remaining: limit, retryAfterSec: 1 };
    return { allowed: w.count <= limit, limit, remaining: Math.max(0, limit - w.count), retryAfterSec: retryAfterSec(w.ttlMs) };
  }
}
