import { Injectable } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { RedisWindowCounter, retryAfterSec } from './redis-window';

const WINDOW_MS = 60_000;

/**
 * Failed authentications per client address (TIMER_AUTH_FAILURES_PER_MIN, default 20; 0 = off): a
 * fixed one-minute window per address in Redis (`<prefix>authfail:<address>`), shared by every api
 * replica. Only failures are counted and only failures are refused: past the limit a failed attempt
 * answers 429 instead of 401 until the window ends, while a valid token from the same address is
 * never looked at here, so no client can lock another out. A Redis failure lets requests through.
 */
@Injectable()
export class AuthFailureLimiterService {
  constructor(
    private readonly windows: RedisWindowCounter,
    private readonly config: ApiConfig,
  ) {}

  get enabled(): boolean {
    return this.config.authFailuresPerMin > 0 && !this.config.authDisabled;
  }

  /** Counts one failure of `address`; throws the 429 (with Retry-After) once it is past its limit for this window. */
  async recordFailure(address: string): Promise<void> {
    const limit = this.config.authFailuresPerMin;
    const w = await this.windows.incr('failed-authentication limit', this.windows.keys.authFailures(address), WINDOW_MS);
    if (!w || w.count <= limit) return;
    const retryAfter = retryAfterSec(w.ttlMs);
    throw new ApiError(429, ErrorCode.AUTH_FAILURES_LIMITED, `too many failed authentications from this address (${limit} per minute); retry in ${retryAfter} s`, {
      'Retry-After': String(retryAfter),
    });
  }
}
