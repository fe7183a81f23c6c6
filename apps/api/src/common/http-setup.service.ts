import { Injectable, Logger, MethodNotAllowedException, OnApplicationBootstrap } from '@nestjs/common';
import type { Server } from 'http';
import { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { parserError } from './api-exception.filter';
import { propertiesTransformedBy } from './dto-metadata';
import { ApiError, ErrorCode } from './errors';
import { verifyJsonBody } from './json-depth';
import { toTimerId, toTimerIds } from './validators';
import { ApiConfig } from '../config/api.env';
import { CONSOLE_PATH, consoleStatic } from '../console/console-static';
import { controllersOf, serveOpenApi } from '../docs/openapi';
import { RouteInputs, routeInputs } from '../docs/request-schema';
import { ApiMetrics } from '../metrics/api.metrics';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The API reads JSON only: a POST, PUT or PATCH (or a DELETE with a body) under /api/ whose
 * Content-Type is missing or not JSON answers 415 before anything else is looked at, instead of a list
 * of field errors for a body nobody parsed.
 */
function requireJson(req: Request, _res: Response, next: NextFunction): void {
  const api = req.path.startsWith('/api/') && !req.path.startsWith('/api/docs');
  const hasBody = BODY_METHODS.has(req.method) || (req.method === 'DELETE' && (req.headers['content-length'] ?? '0') !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (!api || !hasBody || req.is(['application/json', '+json'])) return next();
  const given = req.headers['content-type'];
  next(new ApiError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, given ? `Content-Type ${JSON.stringify(given.slice(0, 64))} is not accepted: send application/json` : 'Content-Type is missing: send application/json'));
}

/**
 * 405 with `Allow` for a method no route of a known path takes (TRACE, or PUT on a GET-only path), where
 * Express would answer 404 as for an unknown path. HEAD (of a GET) and OPTIONS stay Express's.
 */
function methodNotAllowed(routes: () => readonly RouteInputs[]) {
  let allowed: Map<string, string[]> | undefined;
  const allowedOn = (path: string): string[] | undefined => {
    if (!allowed) {
      allowed = new Map();
      for (const r of routes()) allowed.set(r.path, [...(allowed.get(r.path) ?? []), r.method.toUpperCase()]);
      for (const methods of allowed.values()) if (methods.includes('GET')) methods.push('HEAD');
    }
    return allowed.get(path.length > 1 ? path.replace(/\/+$/, '') : path);
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const methods = allowedOn(req.path);
    if (!methods || methods.includes(req.method) || req.method === 'OPTIONS') return next();
    const allow = methods.join(', ');
    res.setHeader('Allow', allow);
    const msg = `${req.method} is not allowed on ${req.path}: use ${allow}`;
    next(req.path.startsWith('/api/') ? new ApiError(405, ErrorCode.METHOD_NOT_ALLOWED, msg, { Allow: allow }) : new MethodNotAllowedException(msg));
  };
}

/**
 * Configures the HTTP server from inside the module, so the role's `main.ts` (which only calls
 * `bootstrapRole`) and the tests (Nest's testing module) get the same server:
 * - `trust proxy` from TIMER_TRUSTED_PROXIES, so `req.ip` is the client behind a trusted ingress;
 * - the request metrics (`ApiMetrics`), first, so they also time requests the body parser refuses;
 * - 405 with `Allow` for a method a known path does not take (`methodNotAllowed`);
 * - 415 for a body that is not declared JSON (`requireJson`);
 * - the JSON body parser with an explicit limit (TIMER_BODY_LIMIT_BYTES), refusing bodies nested
 *   deeper than MAX_JSON_DEPTH, not UTF-8, with a duplicate or prototype key, a lone surrogate or an
 *   id (a field the routes' DTOs read with `toTimerId`) not written in digits, before they are parsed
 *   (`verifyJsonBody`). Nest installs its own
 *   100 kB parser at `init()` unless one named `jsonParser` is already there, so ours must be in place
 *   before `init()`. Its failures (including a body that does not decompress) become the API's 4xx
 *   envelope right after it (`parserError`);
 * - the OpenAPI document and UI;
 * - the web console's static files at /console (`consoleStatic`), outside the API's auth.
 * Both happen when the HTTP adapter is attached (`HttpAdapterHost.init$`, which replays): during
 * `NestFactory.create` in production, in `createNestApplication()` in tests; in both cases before routes.
 */
@Injectable()
export class HttpSetupService implements OnApplicationBootstrap {
  private readonly logger = new Logger(HttpSetupService.name);

  constructor(
    private readonly host: HttpAdapterHost,
    modules: ModulesContainer,
    private readonly config: ApiConfig,
    metrics: ApiMetrics,
  ) {
    host.init$.subscribe(() => {
      const adapter: unknown = host.httpAdapter;
      if (!(adapter instanceof ExpressAdapter)) {
        this.logger.warn('not an Express adapter: JSON body limit and OpenAPI routes not installed');
        return;
      }
      adapter.getInstance().disable('x-powered-by');
      // X-Forwarded-For is believed only from these hops (req.ip is the first address they did not add).
      if (config.trustedProxies.length > 0) adapter.getInstance().set('trust proxy', config.trustedProxies);
      // The routes are read on first use: the controllers are all registered by then.
      let routes: RouteInputs[] | undefined;
      const routesNow = () => (routes ??= routeInputs(controllersOf(modules)));
      adapter.use(metrics.middleware());
      adapter.use(methodNotAllowed(routesNow));
      adapter.use(requireJson);
      let idFields: ReadonlySet<string> | undefined;
      const ids = () => (idFields ??= propertiesTransformedBy(routesNow().flatMap((r) => (r.body ? [r.body] : [])), [toTimerId, toTimerIds]));
      const verify = (req: unknown, res: unknown, body: Buffer, charset: string) => verifyJsonBody(req, res, body, charset, ids());
      adapter.useBodyParser('json', false, { limit: config.bodyLimitBytes, strict: true, verify });
      adapter.use((err: unknown, req: Request, _res: Response, next: NextFunction) => {
        next((req.path.startsWith('/api/') && parserError(err, req)) || err);
      });
      serveOpenApi(host, modules);
      adapter.use(CONSOLE_PATH, consoleStatic(config.consoleDir));
    });
  }

  /**
   * Slow clients (TIMER_HTTP_*_TIMEOUT_MS): Node answers 408 and closes a connection whose headers or
   * whole request take longer. It checks every `connectionsCheckingInterval` (default 30 s, read when
   * the server starts listening, which follows this hook), so a second keeps the cut-off near the limit.
   */
  onApplicationBootstrap(): void {
    const server = this.host.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server) return;
    const t = this.config.httpTimeouts;
    server.headersTimeout = t.headersMs;
    server.requestTimeout = t.requestMs;
    server.keepAliveTimeout = t.keepAliveMs;
    (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 1000;
  }
}
