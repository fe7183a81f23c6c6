import { Injectable } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { RedisWindowCounter, retryAfterSec } from './redis-window';

const WINDOW_MS = 60_000;
const WHAT = 'failed-authentication limit';
/**
 * How long an address found under its limit is not looked up again: steady traffic from one client
 * then costs a Redis round trip a second instead of one per request. A failure recorded here clears
 * it at once; another replica's failures are seen within this time.
 */
const CLEAR_FOR_MS = 1_000;
const MAX_CLEAR = 10_000;

/**
 * Failed authentications per client address (TIMER_AUTH_FAILURES_PER_MIN, default 20; 0 = off): a
 * fixed one-minute window per address in Redis (`<prefix>authfail:<address>`), shared by every api
 * replica. Once an address has failed that often, its requests answer 429 until the window ends,
 * before their token is looked at. Successful requests are not counted. A Redis failure lets
 * requests through.
 */
@Injectable()
export class AuthFailureLimiterService {
  /** Addresses last found under the limit, until when that answer is reused. */
  private readonly clearUntil = new Map<string, number>();

  constructor(
    private readonly windows: RedisWindowCounter,
    private readonly config: ApiConfig,
  ) {}

  get enabled(): boolean {
    return this.config.authFailuresPerMin > 0 && !this.config.authDisabled;
  }

  /** Throws the 429 (with Retry-After) when `address` has used its failures for this window. */
  async assertAllowed(address: string): Promise<void> {
    const limit = this.config.authFailuresPerMin;
    const now = Date.now();
    if ((this.clearUntil.get(address) ?? 0) > now) return;
    const w = await this.windows.peek(WHAT, `authfail:${address}`);
    if (!w || w.count < limit) {
      if (this.clearUntil.size >= MAX_CLEAR) this.clearUntil.clear();
      this.clearUntil.set(address, now + CLEAR_FOR_MS);
      return;
    }
    const retryAfter = retryAfterSec(w.ttlMs);
    throw new ApiError(429, ErrorCode.AUTH_FAILURES_LIMITED, `too many failed authentications from this address (${limit} per minute); retry in ${retryAfter} s`, {
      'Retry-After': String(retryAfter),
    });
  }

  async recordFailure(address: string): Promise<void> {
    this.clearUntil.delete(address);
    await this.windows.incr(WHAT, `authfail:${address}`, WINDOW_MS);
  }
}
