import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError, ErrorCode } from '../common/errors';
import { APP_NAME } from '../common/validators';
import { AuthedRequest } from './principal';
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
 * Authentication, then the per-app rate limit. Applied to the API controllers only (`@ApiAuth()`),
 * so /health, /metrics and /api/docs stay open.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly auth: TokenAuthService,
    private readonly limiter: RateLimiterService,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const http = ctx.switchToHttp();
    const req = http.getRequest<Request & AuthedRequest>();
    req.principal = await this.auth.authenticate(req.headers.authorization);
    if (!this.limiter.enabled) return true;
    const d = await this.limiter.take(rateKey(req));
    const res = http.getResponse<Response>();
    res.setHeader('X-RateLimit-Limit', String(d.limit));
    res.setHeader('X-RateLimit-Remaining', String(d.remaining));
    if (!d.allowed) {
      throw new ApiError(429, ErrorCode.RATE_LIMITED, `rate limit of ${d.limit} requests per second for this app exceeded`, {
        'Retry-After': String(d.retryAfterSec),
      });
    }
    return true;
  }
}
