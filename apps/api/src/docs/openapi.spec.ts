import SwaggerParser from '@apidevtools/swagger-parser';
import { INestApplication, Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { OperationObject, ParameterObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { Test } from '@nestjs/testing';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { loadRoleConfig } from '@timer/platform';
import { AppModule } from '../app.module';
import { buildOpenApiDocument, TAGS } from './openapi';
import { isOptional, nestedClass, validatedProperties } from '../common/dto-metadata';
import { RouteInputs, routeInputs } from './request-schema';

type Op = OperationObject & { path: string; method: string };

// The document exactly as the api serves it, from the api module's controllers (services mocked: only
// the decorators are read).
async function apiDocument(): Promise<{ doc: OpenAPIObject; routes: RouteInputs[]; app: INestApplication }> {
  const controllers = AppModule.register(loadRoleConfig('api', {}), {}).controllers as Type<unknown>[];
  const ref = await Test.createTestingModule({ controllers }).useMocker(() => ({})).compile();
  const app = ref.createNestApplication({ logger: false });
  return { doc: buildOpenApiDocument(app, app.get(ModulesContainer)), routes: routeInputs(controllers), app };
}

const operations = (doc: OpenAPIObject): Op[] =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, op]) => (typeof op === 'object' && op && 'responses' in op ? [{ ...(op as OperationObject), path, method }] : [])),
  );

function resolve(doc: OpenAPIObject, s: unknown): SchemaObject {
  const o = s as SchemaObject & { $ref?: string };
  const ref = o.$ref ?? (o.allOf?.length === 1 ? (o.allOf[0] as { $ref?: string }).$ref : undefined);
  return ref ? (doc.components?.schemas?.[ref.split('/').pop() as string] as SchemaObject) : o;
}

/**
 * What the document is missing for one validated property: each class-validator rule with a JSON
 * Schema keyword must appear on the property's schema or, for `oneOf`, on a branch of the type the
 * rule applies to. Derived from the metadata on its own, not from the code that writes the document.
 */
function missingKeywords(where: string, s: SchemaObject, ms: readonly ValidationMetadata[]): string[] {
  const forms = (s.oneOf ?? [s]) as SchemaObject[];
  const strings = forms.filter((f) => f.type === 'string');
  const numbers = forms.filter((f) => f.type === 'number' || f.type === 'integer');
  const problems: string[] = [];
  const need = (ok: boolean, what: string) => ok || problems.push(`${where}: ${what}`);
  const KEYWORDS: Record<string, [SchemaObject[], keyof SchemaObject]> = { minLength: [strings, 'minLength'], maxLength: [strings, 'maxLength'], min: [numbers, 'minimum'], max: [numbers, 'maximum'] };
  for (const m of ms) {
    const c = m.constraints ?? [];
    const rule = String((m as ValidationMetadata & { name?: string }).name);
    if (rule in KEYWORDS) {
      const [where, keyword] = KEYWORDS[rule];
      need(where.some((f) => f[keyword] === c[0]), `${keyword} ${String(c[0])}`);
    } else if (rule === 'matches') {
      need(strings.some((f) => f.pattern === (c[0] as RegExp).source) && (c[0] as RegExp).flags === '', `pattern ${String(c[0])}`);
    } else if (rule === 'isInt') need(numbers.some((f) => f.type === 'integer'), 'type integer');
    else if (rule === 'isIn') need(JSON.stringify(s.enum) === JSON.stringify(c[0]), `enum ${JSON.stringify(c[0])}`);
  }
  return problems;
}

/** Mismatches between a request body schema and the DTO class validated against it, nested classes included. */
function bodyProblems(doc: OpenAPIObject, where: string, schema: unknown, cls: Type<unknown>): string[] {
  const s = resolve(doc, schema);
  const props = validatedProperties(cls);
  const problems: string[] = [];
  if (s.additionalProperties !== false) problems.push(`${where}: additionalProperties is not false`);
  const documented = Object.keys(s.properties ?? {}).sort();
  const validated = [...props.keys()].sort();
  if (JSON.stringify(documented) !== JSON.stringify(validated)) problems.push(`${where}: documents [${documented}] but validates [${validated}]`);
  const required = [...props].filter(([, ms]) => !isOptional(ms)).map(([p]) => p).sort();
  if (JSON.stringify([...(s.required ?? [])].sort()) !== JSON.stringify(required)) problems.push(`${where}: required [${s.required ?? []}], validators require [${required}]`);
  for (const [name, ms] of props) {
    const p = s.properties?.[name];
    if (!p) continue;
    const nested = nestedClass(cls, name);
    if (nested && ms.some((m) => m.type === 'nestedValidation')) problems.push(...bodyProblems(doc, `${where}.${name}`, p, nested));
    else problems.push(...missingKeywords(`${where}.${name}`, resolve(doc, p), ms));
  }
  return problems;
}

function queryProblems(where: string, op: OperationObject, cls: Type<unknown>): string[] {
  const params = ((op.parameters ?? []) as ParameterObject[]).filter((p) => p.in === 'query');
  const props = validatedProperties(cls);
  const problems: string[] = [];
  const documented = params.map((p) => p.name).sort();
  const validated = [...props.keys()].sort();
  if (JSON.stringify(documented) !== JSON.stringify(validated)) problems.push(`${where}: documents [${documented}] but validates [${validated}]`);
  for (const p of params) {
    const ms = props.get(p.name);
    if (!ms) continue;
    if (Boolean(p.required) === isOptional(ms)) problems.push(`${where}.${p.name}: required is ${String(p.required)}`);
    problems.push(...missingKeywords(`${where}.${p.name}`, p.schema as SchemaObject, ms));
  }
  return problems;
}

describe('the OpenAPI document', () => {
  let doc: OpenAPIObject;
  let routes: RouteInputs[];
  let app: INestApplication;

  beforeAll(async () => ({ doc, routes, app } = await apiDocument()));
  afterAll(() => app.close());

  it('is a valid OpenAPI 3 document (swagger-parser)', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('names every operation with a unique camelCase operationId and a declared tag', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThanOrEqual(17);
    const ids = ops.map((o) => o.operationId);
    expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(String(id)))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    const declared = (doc.tags ?? []).map((t) => t.name);
    expect(declared).toEqual(TAGS.map((t) => t.name));
    expect(ops.filter((o) => !o.tags?.length || o.tags.some((t) => !declared.includes(t))).map((o) => o.operationId)).toEqual([]);
    expect(ids).toEqual(expect.arrayContaining(['createTimer', 'updateTimer', 'patchTimer', 'getTimer', 'listTimers', 'deleteTimer', 'enableTimer', 'disableTimer', 'runTimer', 'listTimerVersions', 'listRecords']));
  });

  it('describes the bearer token as what it is, not a JWT', () => {
    const bearer = doc.components?.securitySchemes?.bearer as { bearerFormat?: string; description?: string };
    expect(bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(bearer.bearerFormat).toBeUndefined();
    expect(bearer.description).toMatch(/not a JWT/);
  });

  it('gives every request body and query the keywords, required fields and closed objects their validators enforce', () => {
    const problems: string[] = [];
    let bodies = 0;
    let queries = 0;
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method as 'get'];
      if (!op) {
        problems.push(`${r.method} ${r.path}: not in the document`);
        continue;
      }
      const where = String(op.operationId);
      if (r.body) {
        bodies++;
        const schema = op.requestBody && 'content' in op.requestBody ? op.requestBody.content['application/json']?.schema : undefined;
        if (!schema) problems.push(`${where}: validates a body the document does not describe`);
        else problems.push(...bodyProblems(doc, where, schema, r.body));
      }
      if (r.query) {
        queries++;
        problems.push(...queryProblems(where, op, r.query));
      }
    }
    expect(problems).toEqual([]);
    expect(bodies).toBeGreaterThanOrEqual(10);
    expect(queries).toBeGreaterThanOrEqual(5);
  });

  it('declares 413 and 415 where a body is read, 429 with Retry-After and X-Request-Id on every error', () => {
    const problems: string[] = [];
    for (const op of operations(doc).filter((o) => o.path.startsWith('/api/'))) {
      const statuses = Object.keys(op.responses);
      if (op.requestBody && !(statuses.includes('413') && statuses.includes('415'))) problems.push(`${op.operationId}: no 413/415`);
      const tooMany = op.responses['429'] as { headers?: Record<string, unknown> } | undefined;
      if (!tooMany?.headers?.['Retry-After']) problems.push(`${op.operationId}: no 429 with Retry-After`);
      for (const [status, res] of Object.entries(op.responses)) {
        if (Number(status) >= 400 && !(res as { headers?: Record<string, unknown> }).headers?.['X-Request-Id']) problems.push(`${op.operationId} ${status}: no X-Request-Id`);
      }
    }
    expect(problems).toEqual([]);
    expect(doc.paths['/api/timer/v1/def'].post?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', schema: expect.objectContaining({ maxLength: 255 }) })]),
    );
  });

  it('states every cross-field rule in x-timer-rules and in words in the description, and the one grammar of ids', () => {
    const rulesOf = (op: OperationObject | undefined) => (op as (OperationObject & { 'x-timer-rules'?: { rule: string; text: string }[] }) | undefined)?.['x-timer-rules'] ?? [];
    const create = doc.paths['/api/timer/v1/def'].post;
    expect(rulesOf(create)).toEqual(expect.arrayContaining([expect.objectContaining({ rule: 'exactlyOne', fields: ['cron', 'runAt', 'every'] })]));
    for (const op of operations(doc).filter((o) => rulesOf(o).length > 0)) {
      for (const r of rulesOf(op)) expect([op.operationId, op.description]).toEqual([op.operationId, expect.stringContaining(r.text)]);
    }
    const withRules = operations(doc).filter((o) => rulesOf(o).length > 0).map((o) => o.operationId);
    expect(withRules).toEqual(
      expect.arrayContaining(['createTimer', 'createTimers', 'updateTimer', 'patchTimer', 'previewFireTimes', 'backfillTimer', 'listRecords', 'replayDeadLetters', 'purgeDeadLetters', 'createMaintenanceWindow', 'getProjectedLoad', 'getAppAccounting']),
    );
    const enableBody = resolve(doc, (doc.paths['/api/timer/v1/enable'].post?.requestBody as { content: Record<string, { schema: SchemaObject }> }).content['application/json'].schema);
    expect((enableBody.properties?.id as SchemaObject).description).toMatch(/`1e3`, `1\.0`, `-1` or `"0x10"` is refused/);
  });
});
