import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError, ErrorCode } from '../common/errors';
import { APP_NAME } from '../common/validators';
import { ApiMetrics } from '../metrics/api.metrics';
import { AuthFailureLimiterService } from './auth-failure-limiter.service';
import { clientAddress } from './client-address';
import { AuthedRequest, Principal } from './principal';
import { RateLimiterService } from './rate-limiter.service';
import { TokenAuthService } from './token-auth.service';

/** The app a request is about, for the rate limit: the token's app, else the `app` it names. */
function rateKey(req: Request & AuthedRequest): string {
  const p = req.principal;
  if (p?.kind === 'app') return p.app;
  const named = (req.body as { app?: unknown } | undefined)?.app ?? (req.query as { app?: unknown } | undefined)?.app;
  return typeof named === 'string' && APP_NAME.test(named) ? named : '-';
}

/**
 * Authentication (failures limited per client address), then the per-app rate limit. Applied to the API controllers only (`@ApiAuth()`), so /health, /metrics and /api/docs stay
 * open. Each 401 and 429 it answers is counted (`ApiMetrics`).
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly auth: TokenAuthService,
    private readonly limiter: RateLimiterService,
    private readonly failures: AuthFailureLimiterService,
    private readonly metrics: ApiMetrics,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const http = ctx.switchToHttp();
    const req = http.getRequest<Request & AuthedRequest>();
    req.principal = await this.authenticate(req);
    if (!this.limiter.enabled) return true;
    const d = await this.limiter.take(rateKey(req));
    const res = http.getResponse<Response>();
    res.setHeader('X-RateLimit-Limit', String(d.limit));
    res.setHeader('X-RateLimit-Remaining', String(d.remaining));
    if (!d.allowed) {
      this.metrics.rateLimited.inc({ limit: 'app' });
      throw new ApiError(429, ErrorCode.RATE_LIMITED, `rate limit of ${d.limit} requests per second for this app exceeded`, {
        'Retry-After': String(d.retryAfterSec),
      });
    }
    return true;
  }

  /**
   * The caller's principal. A valid token is judged by its app's rate limit alone, whatever else its
   * address sent. A failed attempt (401) counts against the client's address (`clientAddress`, which
   * believes X-Forwarded-For only from TIMER_TRUSTED_PROXIES); past the limit it answers 429 instead.
   */
  private async authenticate(req: Request): Promise<Principal> {
    try {
      return await this.auth.authenticate(req.headers.authorization);
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401) throw e;
      if (this.failures.enabled) {
        try {
          await this.failures.recordFailure(clientAddress(req));
        } catch (limited) {
          if (limited instanceof ApiError && limited.status === 429) this.metrics.rateLimited.inc({ limit: 'auth_failures' });
          throw limited;
        }
      }
      this.metrics.authFailures.inc({ reason: req.headers.authorization ? 'invalid' : 'missing' });
      throw e;
    }
  }
}
