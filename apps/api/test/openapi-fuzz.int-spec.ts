import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { OperationObject, ParameterObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { AddressInfo } from 'net';
import { ApiConfig } from '../src/config/api.env';
import { ADMIN_TOKEN, ApiHarness } from './api-harness';
import { invalidValues, resolve, Schema, validValues } from './schema-values';

// The schema-driven fuzzer: every operation of the document the api serves, against that api bound to
// 127.0.0.1 over real MariaDB, Redis and Pulsar. From one accepted request per operation it varies one
// field at a time: values the document allows must not be refused with a 400 (a refusal naming another
// field of the request too is a cross-field rule the descriptions state, counted apart), values it
// refuses must be a 4xx naming the field; no answer is a 5xx and every status is declared.
jest.setTimeout(90_000);

type Op = OperationObject & { path: string; method: string; operationId: string };
interface Req {
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
}
interface Answer {
  status: number;
  msg: string;
  requestId: string | null;
}

const DAY = 86_400_000;
/** `drop`: fields the value replaces (removed from the request); `with`: fields it needs (set beside it). */
type Meaningful = (now: number, config: ApiConfig) => { values: unknown[]; drop?: string[]; with?: Record<string, unknown> };
/**
 * Fields whose valid values the schema cannot generate: their rules are about meaning (a cron that
 * parses, an IANA zone, a one-shot time in the future that replaces the cron), stated in their
 * descriptions. Valid variants take these values; invalid ones are still generated from the schema.
 */
const MEANINGFUL: Record<string, Meaningful> = {
  cron: () => ({ values: ['0 */5 * * * *', '*/15 * * * *', '0 0 9 * * MON-FRI'] }),
  timeZone: () => ({ values: ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires'] }),
  runAt: (now) => ({ values: [now + 3_600_000, new Date(now + DAY).toISOString(), '2999-12-31T23:59:59.999+14:00'], drop: ['cron'] }),
  // Bounds of a schedule: in the future, with a fire of the schedule inside them.
  startAt: (now) => ({ values: [now + 3_600_000, new Date(now + DAY).toISOString()] }),
  endAt: (now) => ({ values: [now + 7 * DAY, new Date(now + 30 * DAY).toISOString()] }),
  // The document's maximum is the cap of every configuration; this process's is TIMER_CALLBACK_TIMEOUT_MAX_MS.
  timeoutMs: (_now, config) => ({ values: [1_000, config.callbackTimeoutMaxMs] }),
  // Needs a jitter to spread within (without one: 400 naming autoSpread and jitterMs, a cross-field rule).
  autoSpread: () => ({ values: [false, true], with: { jitterMs: 3_000 } }),
};
/** The same per operation, where one field name means something else there: a backfill covers a past range. */
const MEANINGFUL_IN: Record<string, Record<string, Meaningful>> = {
  backfillTimer: {
    from: (now) => ({ values: [now - 120_000, new Date(now - 120_000).toISOString()] }),
    to: (now) => ({ values: [now - 60_000, new Date(now - 60_000).toISOString()] }),
  },
};
const meaningfulOf = (operationId: string, leaf: string): Meaningful | undefined => MEANINGFUL_IN[operationId]?.[leaf] ?? MEANINGFUL[leaf];

const ORDER = (op: Op) => (op.method === 'delete' ? 2 : /^(pause|resume)/.test(op.operationId) ? 1 : 0);

/**
 * Optional query parameters the baseline of an operation gives anyway (from the fixtures): the route
 * needs one of several (the preview: cron, runAt or every), which a document cannot state.
 */
const BASELINE_QUERY: Record<string, string[]> = { previewFireTimes: ['cron'] };
/** The same for body fields: a dead-letter replay or purge needs exactly one selector (fireIds, timerId or all). */
const BASELINE_BODY: Record<string, string[]> = { replayDeadLetters: ['all'], purgeDeadLetters: ['all'] };

describe('OpenAPI document vs the running api: schema-driven fuzzer (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness();
  let base = '';
  let doc: OpenAPIObject;
  let bodyLimit = 0;
  const fixtures: Record<string, unknown> = {};
  let names = 0;

  /**
   * Keeps a request about the fixture's state from failing on the state instead of the field: a fresh
   * name for each create (unless the name is the field tried), the timer's current version for edits.
   */
  async function fresh(req: Req, field: string): Promise<Req> {
    const body = req.body;
    if (!body) return req;
    if ('name' in body && field !== 'name' && body.id === undefined) body.name = `fuzz-${++names}`;
    if ('version' in body && field !== 'version') {
      body.version = ((await h.as().get(`/api/timer/v1/def?id=${String(fixtures.id)}&app=fuzz`)).body as { data?: { version?: number } }).data?.version ?? body.version;
    }
    return req;
  }

  async function send(op: Op, req: Req, raw?: { body: Buffer; headers: Record<string, string> }): Promise<Answer> {
    const qs = new URLSearchParams(req.query).toString();
    const res = await fetch(`${base}${op.path}${qs ? `?${qs}` : ''}`, {
      method: op.method.toUpperCase(),
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(req.body || raw ? { 'content-type': 'application/json' } : {}), ...req.headers, ...raw?.headers },
      body: raw?.body ?? (req.body ? JSON.stringify(req.body) : undefined),
    });
    const text = await res.text();
    let msg = text;
    try {
      msg = String((JSON.parse(text) as { msg?: unknown }).msg ?? '');
    } catch {
      // not JSON: keep the text for the report
    }
    return { status: res.status, msg, requestId: res.headers.get('x-request-id') };
  }

  const operations = (): Op[] =>
    Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/'))
      .flatMap(([path, item]) =>
        (['get', 'post', 'put', 'patch', 'delete'] as const).flatMap((m) => (item[m] ? [{ ...(item[m] as OperationObject), path, method: m, operationId: String(item[m]?.operationId) }] : [])),
      )
      .sort((a, b) => ORDER(a) - ORDER(b));

  const paramsOf = (op: Op, where: 'query' | 'header') => ((op.parameters ?? []) as ParameterObject[]).filter((p) => p.in === where);
  const bodySchema = (op: Op): Schema | undefined =>
    op.requestBody && 'content' in op.requestBody ? (op.requestBody.content['application/json']?.schema as Schema | undefined) : undefined;

  /** The value a field starts from: a fixture (a live timer, app, token), else the first value its schema allows. */
  function startValue(name: string, schema: Schema): unknown {
    if (name === 'name') return `fuzz-${++names}`;
    if (name in fixtures) return fixtures[name];
    const s = resolve(doc, schema);
    if (s.type === 'object' && s.properties) return startObject(s);
    // A list of objects (a batch's timers): one item, itself a baseline.
    if (s.type === 'array' && s.items && resolve(doc, s.items as Schema).type === 'object') return [startObject(s.items as Schema)];
    return validValues(doc, schema)[0];
  }

  function startObject(schema: Schema): Record<string, unknown> {
    const s = resolve(doc, schema);
    const out: Record<string, unknown> = {};
    for (const [name, p] of Object.entries(s.properties ?? {})) {
      if ((s.required ?? []).includes(name) || (name in fixtures && name !== 'runAt')) out[name] = startValue(name, p as Schema);
    }
    return out;
  }

  function baseline(op: Op): Req {
    const req: Req = { query: {}, headers: {} };
    for (const p of paramsOf(op, 'query')) {
      if (p.required || BASELINE_QUERY[op.operationId]?.includes(p.name)) req.query[p.name] = String(startValue(p.name, p.schema as Schema));
    }
    const body = bodySchema(op);
    if (body) req.body = startObject(body);
    const props = body ? resolve(doc, body).properties : undefined;
    for (const name of BASELINE_BODY[op.operationId] ?? []) {
      if (req.body && props?.[name]) req.body[name] = startValue(name, props[name] as Schema);
    }
    for (const [name, m] of Object.entries(MEANINGFUL_IN[op.operationId] ?? {})) {
      if (req.body && props?.[name]) req.body[name] = m(h.clock.now(), h.app.get(ApiConfig)).values[0];
    }
    return req;
  }

  /** One field of a request: where it is, its path for messages, its schema, and how to set or remove it. */
  interface Field {
    path: string;
    schema: Schema;
    inQuery: boolean;
    required: boolean;
    set: (req: Req, v: unknown) => Req;
  }

  function fields(op: Op): Field[] {
    const out: Field[] = [];
    const clone = (r: Req): Req => structuredClone(r);
    for (const where of ['query', 'header'] as const) {
      const bag = (r: Req) => (where === 'query' ? r.query : r.headers);
      for (const p of paramsOf(op, where)) {
        out.push({
          path: p.name,
          schema: p.schema as Schema,
          inQuery: true,
          required: Boolean(p.required),
          set: (r, v) => {
            const c = clone(r);
            if (v === undefined) delete bag(c)[p.name];
            else bag(c)[p.name] = String(v);
            return c;
          },
        });
      }
    }
    const body = bodySchema(op);
    if (!body) return out;
    const walk = (schema: Schema, prefix: string[]) => {
      const s = resolve(doc, schema);
      for (const [name, p] of Object.entries(s.properties ?? {})) {
        const path = [...prefix, name];
        out.push({
          path: path.join('.'),
          schema: p as Schema,
          inQuery: false,
          required: (s.required ?? []).includes(name),
          set: (r, v) => {
            const c = clone(r);
            let target = c.body as Record<string, unknown>;
            for (const k of prefix) target = (target[k] ??= startObject((resolve(doc, body).properties ?? {})[k] as Schema)) as Record<string, unknown>;
            if (v === undefined) delete target[name];
            else target[name] = v;
            return c;
          },
        });
        const inner = resolve(doc, p as Schema);
        if (inner.type === 'object' && inner.properties) walk(p as Schema, path);
      }
    };
    walk(body, []);
    return out;
  }

  beforeAll(async () => {
    await h.start();
    await h.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(h.app.getHttpServer().address() as AddressInfo).port}`;
    doc = (await (await fetch(`${base}/api/docs-json`)).json()) as OpenAPIObject;
    bodyLimit = h.app.get(ApiConfig).bodyLimitBytes;
    const post = async (path: string, body: object) => (await h.as().post(path, body)).body as { id?: number; version?: number; data?: { id?: number } };
    const app = 'fuzz';
    expect((await h.as().post('/api/app/v1/apps', { app })).status).toBe(200);
    const timer = await post('/api/timer/v1/def', { app, name: 'fuzz-fixture', cron: '0 */5 * * * *', notifyHTTPParam: { url: 'https://hooks.example.com/timer', method: 'POST' } });
    const token = await post('/api/app/v1/tokens', { app, label: 'fuzz' });
    Object.assign(fixtures, {
      app,
      id: timer.id,
      timerID: String(timer.id),
      fireID: `${timer.id}-${h.clock.now() + 300_000}`,
      version: timer.version,
      tokenId: token.data?.id,
      cron: '0 */5 * * * *',
      // A maintenance window's baseline takes the cron fixture, which needs its length.
      durationMs: 60_000,
    });
  });
  afterAll(() => h.stop());

  it('accepts what the document allows, refuses what it does not naming the field, never a 5xx, every status declared', async () => {
    const mismatches: string[] = [];
    const crossField: string[] = [];
    let sent = 0;
    const judge = (op: Op, what: string, a: Answer) => {
      sent++;
      if (a.status >= 500) mismatches.push(`${op.operationId} ${what}: ${a.status} ${a.msg}`);
      else if (!(String(a.status) in op.responses)) mismatches.push(`${op.operationId} ${what}: status ${a.status} not declared (${a.msg})`);
      if (a.status >= 400 && !a.requestId) mismatches.push(`${op.operationId} ${what}: ${a.status} without X-Request-Id`);
    };

    for (const op of operations()) {
      const start = baseline(op);
      const first = await send(op, start);
      judge(op, 'baseline', first);
      if (first.status === 400) mismatches.push(`${op.operationId} baseline ${JSON.stringify(start)}: 400 ${first.msg}`);
      const all = fields(op);
      const others = (f: Field) => all.filter((o) => o.path !== f.path && !f.path.startsWith(`${o.path}.`) && !o.path.startsWith(`${f.path}.`)).map((o) => o.path.split('.').pop() as string);

      for (const f of all) {
        const leaf = f.path.split('.').pop() as string;
        const meaningful = meaningfulOf(op.operationId, leaf)?.(h.clock.now(), h.app.get(ApiConfig));
        const valid = meaningful ? meaningful.values : validValues(doc, f.schema);
        for (const v of valid) {
          const req = await fresh(f.set(start, v), f.path);
          for (const d of meaningful?.drop ?? []) if (req.body) delete req.body[d];
          if (req.body && meaningful?.with) Object.assign(req.body, meaningful.with);
          const a = await send(op, req);
          const what = `${f.path}=${JSON.stringify(v).slice(0, 80)}`;
          judge(op, what, a);
          if (a.status !== 400) continue;
          const named = others(f).filter((o) => new RegExp(`\\b${o}\\b`).test(a.msg));
          if (a.msg.includes(leaf) && named.length > 0) crossField.push(`${op.operationId} ${what}: ${a.msg}`);
          else mismatches.push(`${op.operationId} ${what}: the document allows it, the api answers 400 ${a.msg}`);
        }
        const header = paramsOf(op, 'header').some((p) => p.name === f.path);
        // HTTP drops the spaces around a header value and refuses control characters in it: such a value cannot be sent as is.
        const sendable = (v: unknown) => !header || (typeof v === 'string' && v.trim() === v && !/[\x00-\x1f\x7f]/.test(v));
        const invalid = [...invalidValues(doc, f.schema, f.inQuery).filter(sendable), ...(f.required ? [undefined] : [])];
        for (const v of invalid) {
          const a = await send(op, await fresh(f.set(start, v), f.path));
          const what = `${f.path}=${v === undefined ? '(missing)' : JSON.stringify(v).slice(0, 80)}`;
          judge(op, what, a);
          if (a.status < 400 || a.status >= 500 || !a.msg.includes(f.path)) mismatches.push(`${op.operationId} ${what}: the document refuses it, the api answers ${a.status} ${a.msg}`);
        }
      }
      // Unknown fields: the document closes every body and query (additionalProperties false, listed
      // parameters). A route without query parameters reads no query: one there is ignored.
      if (paramsOf(op, 'query').length > 0) {
        const q = await send(op, { ...start, query: { ...start.query, fuzzUnknown: '1' } });
        judge(op, 'unknown query parameter', q);
        if (q.status !== 400 || !q.msg.includes('fuzzUnknown')) mismatches.push(`${op.operationId} ?fuzzUnknown=1: ${q.status} ${q.msg}`);
      }
      if (start.body) {
        for (const f of [{ path: '' }, ...all.filter((x) => !x.inQuery && resolve(doc, x.schema).type === 'object' && resolve(doc, x.schema).properties)]) {
          const req = structuredClone(start);
          const target = f.path ? (f.path.split('.').reduce<Record<string, unknown>>((o, k) => (o[k] ??= {}) as Record<string, unknown>, req.body as Record<string, unknown>)) : (req.body as Record<string, unknown>);
          target.fuzzUnknown = 1;
          const a = await send(op, await fresh(req, ''));
          judge(op, `unknown property ${f.path}`, a);
          if (a.status !== 400 || !a.msg.includes('fuzzUnknown') || !a.msg.includes(f.path)) mismatches.push(`${op.operationId} ${f.path}.fuzzUnknown: ${a.status} ${a.msg}`);
        }
      }
    }
    process.stdout.write(`openapi fuzzer: ${sent} requests over ${operations().length} operations; refused by cross-field rules:\n  ${crossField.join('\n  ')}\n`);
    expect(mismatches).toEqual([]);
    expect(sent).toBeGreaterThan(300);
  });

  it('answers 413 and 415 as declared for every operation that reads a body', async () => {
    const ops = operations().filter((op) => op.requestBody);
    expect(ops.length).toBeGreaterThanOrEqual(10);
    for (const op of ops) {
      const large = await send(op, baseline(op), { body: Buffer.from(JSON.stringify({ pad: 'x'.repeat(bodyLimit) })), headers: {} });
      const encoded = await send(op, baseline(op), { body: Buffer.from('{}'), headers: { 'content-encoding': 'zip9' } });
      expect([op.operationId, large.status, String(large.status) in op.responses]).toEqual([op.operationId, 413, true]);
      expect([op.operationId, encoded.status, String(encoded.status) in op.responses]).toEqual([op.operationId, 415, true]);
      expect(large.requestId).toBeTruthy();
    }
  });

  it('serves a valid document with readable, unique operation ids for every route the process has', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    const ops = Object.values(doc.paths).flatMap((item) => Object.values(item) as OperationObject[]);
    const declared = (doc.tags ?? []).map((t) => t.name);
    expect(ops.filter((op) => !op.tags?.length || op.tags.some((t) => !declared.includes(t))).map((op) => `${op.operationId} ${op.tags}`)).toEqual([]);
    const ids = ops.map((op) => op.operationId);
    expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(String(id)))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
