import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, Histogram } from 'prom-client';
import { MetricsService } from '@timer/platform';

/** Which limit answered 429: the per-app rate limit, or the failed-authentication limit of an address. */
export type RateLimit = 'app' | 'auth_failures';
/** Why authentication failed: no Authorization header, or one that is malformed, unknown or revoked. */
export type AuthFailureReason = 'missing' | 'invalid';

/** The route label of requests no route handled: unknown paths, and bodies refused before routing (413, malformed JSON). */
export const UNMATCHED_ROUTE = 'unmatched';
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route template Express matched (`/api/timer/v1/def`), never the raw URL, so the label set stays bounded. */
export function routeLabel(req: Request): string {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : UNMATCHED_ROUTE;
}

export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'OTHER';
}

export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}

/**
 * The api's RED metrics: `http_server_request_duration_seconds` (the OpenTelemetry name, so stock
 * HTTP dashboards find it) by route template, method and status class, plus the refusals an
 * operator wants told apart from other 4xx: 429s by limit and failed authentications.
 */
@Injectable()
export class ApiMetrics {
  readonly requestDuration: Histogram<'route' | 'method' | 'status_class'>;
  readonly rateLimited: Counter<'limit'>;
  readonly authFailures: Counter<'reason'>;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.requestDuration = new Histogram({
      name: 'http_server_request_duration_seconds',
      help: 'Duration of HTTP requests from arrival to the last byte of the answer, by route template (unmatched: no route), method and status class',
      labelNames: ['route', 'method', 'status_class'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.rateLimited = new Counter({
      name: 'timer_api_rate_limited_total',
      help: 'Requests answered 429, by limit: app (TIMER_RATE_LIMIT_PER_SEC) or auth_failures (TIMER_AUTH_FAILURES_PER_MIN of the client address)',
      labelNames: ['limit'],
      registers,
    });
    this.authFailures = new Counter({
      name: 'timer_api_auth_failures_total',
      help: 'Requests answered 401, by reason: missing (no Authorization header) or invalid (malformed, unknown or revoked token)',
      labelNames: ['reason'],
      registers,
    });
    // Exported at 0 from the start, so increase() sees a process's first refusal.
    for (const limit of ['app', 'auth_failures'] satisfies RateLimit[]) this.rateLimited.inc({ limit }, 0);
    for (const reason of ['missing', 'invalid'] satisfies AuthFailureReason[]) this.authFailures.inc({ reason }, 0);
  }

  /**
   * Express middleware timing every request until its answer is written. Installed before the body
   * parser (`HttpSetupService`), so requests the parser refuses are counted too. A request whose
   * client went away before the answer ends with `close` and no `finish`: not observed.
   */
  middleware(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      const end = this.requestDuration.startTimer();
      res.once('finish', () => end({ route: routeLabel(req), method: methodLabel(req.method), status_class: statusClass(res.statusCode) }));
      next();
    };
  }
}
