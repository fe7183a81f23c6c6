import { INestApplication, Type } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { HeaderObject, OperationObject, ResponseObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_PATTERN } from '../timers/idempotency-key';
import { describeBody, describeQuery, routeInputs } from './request-schema';
import { TIMER_RULES, TimerRule } from './timer-rules';

export const DOCS_PATH = 'api/docs';

export const TAGS = [
  { name: 'timers', description: 'Timer definitions: create, read, edit with versions, enable, disable, run now, delete.' },
  { name: 'tasks', description: 'Fire records (one per fire of a timer, with its attempts).' },
  { name: 'apps', description: 'Apps, their tokens and signing secret, pause and resume, accounting of fires.' },
  { name: 'calendars', description: 'Calendars of excluded days (dates, public holidays, weekdays) that timers refer to.' },
  { name: 'operations', description: 'Probes and metrics; no token.' },
] as const;

/**
 * Readable operation ids, `<verb><Resource>`, for routes whose controller does not name one in
 * `@ApiOperation({ operationId })`. Any other route keeps Nest's `Controller_method`, which the
 * OpenAPI test refuses, so a new route gets a name here or in its decorator.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'TimersController.create': 'createTimer',
  'TimersController.createBatch': 'createTimers',
  'TimersController.replace': 'updateTimer',
  'TimersController.patch': 'patchTimer',
  'TimersController.get': 'getTimer',
  'TimersController.list': 'listTimers',
  'TimersController.delete': 'deleteTimer',
  'TimersController.enable': 'enableTimer',
  'TimersController.disable': 'disableTimer',
  'TimersController.run': 'runTimer',
  'TimersController.versions': 'listTimerVersions',
  'BackfillController.backfill': 'backfillTimer',
  'QuotasController.put': 'setAppQuota',
  'QuotasController.get': 'getAppQuota',
  'QuotasController.load': 'getProjectedLoad',
  'PreviewController.preview': 'previewFireTimes',
  'TasksController.records': 'listRecords',
  'AppsController.create': 'createApp',
  'AppsController.list': 'listApps',
  'AppsController.tokens': 'listAppTokens',
  'AppsController.issue': 'issueAppToken',
  'AppsController.revoke': 'revokeAppToken',
  'AppsController.rotate': 'rotateAppSecret',
  'AppsController.pause': 'pauseApp',
  'AppsController.resume': 'resumeApp',
  'AccountingController.get': 'getAppAccounting',
  'CalendarsController.create': 'createCalendar',
  'MaintenanceController.create': 'createMaintenanceWindow',
  'MaintenanceController.list': 'listMaintenanceWindows',
  'MaintenanceController.delete': 'deleteMaintenanceWindow',
  'DeadLettersController.list': 'listDeadLetters',
  'DeadLettersController.replay': 'replayDeadLetters',
  'DeadLettersController.purge': 'purgeDeadLetters',
  'DeadLettersController.setFailureWebhook': 'setFailureWebhook',
  'HealthController.readiness': 'getReadiness',
  'HealthController.liveness': 'getLiveness',
  'MetricsController.render': 'getMetrics',
};

function builder() {
  const doc = new DocumentBuilder()
    .setTitle('timer service API')
    .setDescription(
      'Register cron or one-shot timers with an HTTP callback. Every answer is the envelope `{code, msg, ...}`: ' +
        '`code` 0 on success, otherwise HTTP status x 100 + detail with a message naming the problem and a `requestId`. ' +
        'Authenticate with `Authorization: Bearer <token>`: the admin token (TIMER_ADMIN_TOKEN) acts on every app, an ' +
        'app token on its own app only. Request bodies and queries are validated as this document says: an unknown ' +
        'property or query parameter is refused (400 naming it); an optional property given as null, or an empty query ' +
        'value (`?status=`), counts as not given.',
    )
    .setVersion('1')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      description:
        'An opaque token, not a JWT: the admin token (the value of TIMER_ADMIN_TOKEN), or an app token, `tmr_` followed by ' +
        '43 base64url characters, issued once by `issueAppToken` and stored only as its SHA-256.',
    });
  for (const t of TAGS) doc.addTag(t.name, t.description);
  return doc.build();
}

const ERROR_REF = { $ref: '#/components/schemas/ErrorEnvelope' };
const REQUEST_ID: HeaderObject = {
  description: 'Correlation id of this answer (the caller\'s own `X-Request-Id` when it is 1-64 of `[A-Za-z0-9._:-]`), also in the body and the server log.',
  schema: { type: 'string' },
};
const RETRY_AFTER: HeaderObject = { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'integer', minimum: 1 } };
const RATE_HEADERS: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': { description: 'Requests per second allowed for the app (when the rate limit is on).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current second (when the rate limit is on).', schema: { type: 'integer' } },
};
const BODY_ERRORS: Record<string, ResponseObject> = {
  '413': { description: 'request body larger than TIMER_BODY_LIMIT_BYTES after decompression (code 41300)', content: { 'application/json': { schema: ERROR_REF } } },
  '415': { description: 'a `Content-Encoding` other than identity, gzip, deflate or br, or a JSON charset that cannot be decoded (code 41500)', content: { 'application/json': { schema: ERROR_REF } } },
};

const operationsOf = (doc: OpenAPIObject) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    (['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const).flatMap((m) => (item[m] ? [{ path, method: m, op: item[m] as OperationObject }] : [])),
  );

/**
 * What the decorators cannot say, added to the generated document: the validators' keywords and
 * `additionalProperties: false` on every request body and query (from the DTO classes the routes
 * validate against, so a field added later is covered without touching this file), the responses
 * the HTTP layer adds (413, 415, the headers), tags for untagged routes, a token that is not a JWT, and
 * the cross-field rules of `x-timer-rules` in words in the operation's description.
 */
export function tellTheTruth(doc: OpenAPIObject, controllers: readonly Type<unknown>[]): OpenAPIObject {
  delete (doc.components?.securitySchemes?.bearer as { bearerFormat?: string } | undefined)?.bearerFormat;
  for (const r of routeInputs(controllers)) {
    const op = doc.paths[r.path]?.[r.method as 'get'];
    if (!op) continue;
    const body = op.requestBody && 'content' in op.requestBody ? op.requestBody.content['application/json']?.schema : undefined;
    if (r.body && body) describeBody(doc, body, r.body);
    if (r.query) describeQuery(op, r.query);
  }
  for (const { path, op } of operationsOf(doc)) {
    if (!op.tags?.length) op.tags = ['operations'];
    const rules = (op as OperationObject & { [TIMER_RULES]?: TimerRule[] })[TIMER_RULES];
    if (rules?.length) op.description = `${op.description ? `${op.description}\n\n` : ''}Rules between fields (also in \`${TIMER_RULES}\`): ${rules.map((r) => r.text).join(' ')}`;
    if (!path.startsWith('/api/')) continue;
    if (op.requestBody) op.responses = { ...BODY_ERRORS, ...op.responses };
    for (const param of op.parameters ?? []) {
      if ('name' in param && param.in === 'header' && param.name === IDEMPOTENCY_KEY_HEADER) {
        param.schema = { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX, pattern: IDEMPOTENCY_KEY_PATTERN.source };
      }
    }
    for (const [status, res] of Object.entries(op.responses)) {
      if (!res || '$ref' in res) continue;
      const headers: Record<string, HeaderObject> = { ...(res.headers as Record<string, HeaderObject> | undefined) };
      if (Number(status) >= 400) headers['X-Request-Id'] = REQUEST_ID;
      if (status === '429') headers['Retry-After'] = RETRY_AFTER;
      if (status === '503') headers['Retry-After'] = { ...RETRY_AFTER, required: false };
      if (status === '401') headers['WWW-Authenticate'] = { description: '`Bearer`', schema: { type: 'string' } };
      if (op.security?.length && (status.startsWith('2') || status === '429')) Object.assign(headers, RATE_HEADERS);
      if (op.operationId === 'createTimer' && status === '200') {
        headers['Idempotent-Replayed'] = { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } };
      }
      if (Object.keys(headers).length > 0) res.headers = headers;
    }
    op.responses = Object.fromEntries(Object.entries(op.responses).sort(([a], [b]) => a.localeCompare(b)));
  }
  return doc;
}

/** The controllers a module container holds (the routes the document describes). */
export function controllersOf(modules: ModulesContainer): Type<unknown>[] {
  return [...modules.values()].flatMap((m) => [...m.controllers.values()].map((w) => w.metatype as Type<unknown>));
}

/** The API's OpenAPI document: generated from the controllers' decorators, then {@link tellTheTruth}. */
export function buildOpenApiDocument(app: INestApplication, modules: ModulesContainer): OpenAPIObject {
  const doc = SwaggerModule.createDocument(app, builder(), {
    // Untagged controllers (health, metrics) go under `operations`, not a tag named after their class.
    autoTagControllers: false,
    operationIdFactory: (controller, method) => OPERATION_IDS[`${controller}.${method}`] ?? `${controller}_${method}`,
  });
  return tellTheTruth(doc, controllersOf(modules));
}

/**
 * `SwaggerModule` wants the `INestApplication`, which a role module never sees (`bootstrapRole`
 * creates it). What it reads from it: the HTTP adapter, the module container and the application
 * config (global prefix and versioning, neither of which the api uses). This gives it exactly that.
 */
function appView(adapter: AbstractHttpAdapter, modules: ModulesContainer): INestApplication {
  const view = {
    getHttpAdapter: () => adapter,
    useStaticAssets: (path: string, options?: object) => adapter.useStaticAssets(path, options),
    container: { getModules: () => modules, isGlobalModule: () => false },
    config: new ApplicationConfig(),
  };
  return view as unknown as INestApplication;
}

/**
 * Serves the OpenAPI document at `/api/docs` (UI) and `/api/docs-json`, built on first request from
 * the controllers' decorators, so it lists exactly the routes the process serves.
 */
export function serveOpenApi(host: HttpAdapterHost, modules: ModulesContainer): void {
  const app = appView(host.httpAdapter, modules);
  let document: OpenAPIObject | undefined;
  const factory = () => (document ??= buildOpenApiDocument(app, modules));
  SwaggerModule.setup(DOCS_PATH, app, factory, { jsonDocumentUrl: `${DOCS_PATH}-json`, yamlDocumentUrl: `${DOCS_PATH}-yaml` });
}
