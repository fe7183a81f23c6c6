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
 * The failed-authentication limit of the client's address, authentication, then the per-app rate
 * limit. Applied to the API controllers only (`@ApiAuth()`), so /health, /metrics and /api/docs stay
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
   * The caller's principal. A failed attempt (401) counts against the client's address; an address
   * that has failed too often is refused (429) before its token is looked at.
   */
  private async authenticate(req: Request): Promise<Principal> {
    const limited = this.failures.enabled;
    const address = clientAddress(req);
    if (limited) {
      try {
        await this.failures.assertAllowed(address);
      } catch (e) {
        if (e instanceof ApiError && e.status === 429) this.metrics.rateLimited.inc({ limit: 'auth_failures' });
        throw e;
      }
    }
    try {
      return await this.auth.authenticate(req.headers.authorization);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        this.metrics.authFailures.inc({ reason: req.headers.authorization ? 'invalid' : 'missing' });
        if (limited) await this.failures.recordFailure(address);
      }
      throw e;
    }
  }
}
