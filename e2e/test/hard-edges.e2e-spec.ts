import { request as httpRequest } from 'node:http';
import { slowClient } from '@timer/testing';
import { Stack } from '../support';

// Regression tests for the hard edges of the built api process (apps/api/README.md): failed
// authentications never lock out a valid token, slow clients are cut off, input is refused rather
// than rewritten, and each error names its real cause, ids have one grammar, a method a path does not
// take answers 405. Only the api role runs; it trusts
// X-Forwarded-For from loopback, so the tests can play clients behind one proxy. Needs
// `npm run build` first.
jest.setTimeout(120_000);

const ADMIN = 'e2e-hard-edges-admin-token-0123456789';
const APP = 'e2e-edges';
/** Short enough to wait for, far below the 15 s the defaults must meet. */
const HEADERS_TIMEOUT_MS = 3_000;
const REQUEST_TIMEOUT_MS = 4_000;

let stack: Stack;
let base: string;
let appToken: string;

const timerCount = async (): Promise<number> => Number((await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM timers'))[0].n);
/** A create body as JSON text, with `extra` spliced in raw (duplicate keys and escapes survive). */
const createText = (extra: string, name = 'edge') =>
  `{"app":"${APP}","name":"${name}","cron":"0 0 * * *","notifyHTTPParam":{"url":"https://hooks.example.com/t","method":"POST"}${extra}}`;

interface Answer {
  status: number;
  headers: Headers;
  body: { code: number; msg: string; [k: string]: unknown };
}

async function send(method: string, path: string, opts: { token?: string; body?: string; contentType?: string | null; xff?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined && opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
  if (opts.xff) headers['x-forwarded-for'] = opts.xff;
  const res = await fetch(`${base}${path}`, { method, headers, body: opts.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Answer['body']) : ({} as Answer['body']) };
}

beforeAll(async () => {
  stack = await Stack.start({
    roles: ['api'],
    adminToken: ADMIN,
    env: {
      TIMER_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      TIMER_AUTH_FAILURES_PER_MIN: '20',
      TIMER_HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      TIMER_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      TIMER_CALLBACK_ALLOW_PRIVATE: 'true',
    },
  });
  base = `http://127.0.0.1:${stack.port('api')}`;
  expect((await send('POST', '/api/app/v1/apps', { token: ADMIN, body: JSON.stringify({ app: APP }) })).status).toBeLessThan(300);
  const issued = await send('POST', '/api/app/v1/tokens', { token: ADMIN, body: JSON.stringify({ app: APP }) });
  appToken = (issued.body.data as { token: string }).token;
});

afterAll(async () => {
  await stack?.stop();
});

describe('failed authentications never lock out a valid token', () => {
  it('lets the admin and an app token through after 100 unauthenticated requests from their address, which is limited', async () => {
    const from = '198.51.100.10';
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await send('GET', `/api/timer/v1/defs?app=${APP}`, { xff: from })).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
    const limited = await send('GET', `/api/timer/v1/defs?app=${APP}`, { xff: from });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe(42901);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await send('GET', `/api/timer/v1/defs?app=${APP}`, { xff: from, token: ADMIN })).status).toBe(200);
    expect((await send('GET', `/api/timer/v1/defs?app=${APP}`, { xff: from, token: appToken })).status).toBe(200);
    // The loopback proxy itself (no X-Forwarded-For) is another client.
    expect((await send('GET', `/api/timer/v1/defs?app=${APP}`)).status).toBe(401);
  });

  it('limits two clients behind one trusted proxy separately', async () => {
    for (let i = 0; i < 21; i++) await send('GET', `/api/timer/v1/defs?app=${APP}`, { xff: '198.51.100.20', token: 'tmr_guess' });
    expect((await send('GET', `/api/timer/v1/defs?app=${APP}`, { xff: '198.51.100.20', token: 'tmr_guess' })).status).toBe(429);
    expect((await send('GET', `/api/timer/v1/defs?app=${APP}`, { xff: '198.51.100.21', token: 'tmr_guess' })).status).toBe(401);
  });
});

describe('slow clients are cut off', () => {
  it('answers 408 and closes an unfinished header block and a 1 byte/s body within the timeouts, answering others meanwhile', async () => {
    const headers = slowClient(stack.port('api'), `GET /api/timer/v1/defs?app=${APP} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nX-Slow: `);
    const body = slowClient(
      stack.port('api'),
      `POST /api/timer/v1/def HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n`,
      `{"app":"${APP}","name":"slow","cron":"* * * * *"`,
    );
    for (let i = 0; i < 3; i++) {
      expect((await send('GET', `/api/timer/v1/defs?app=${APP}`, { token: ADMIN })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
    }
    const [h, b] = await Promise.all([headers, body]);
    expect(h.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(h.closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS + 2_000);
    expect(b.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(b.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + 2_000);
  });
});

/** Sends each body to create; each must answer 400 naming `field`, and nothing may be written. */
async function refusedCreates(cases: [string, string, RegExp][]): Promise<void> {
  const before = await timerCount();
  for (const [what, body, msg] of cases) {
    const res = await send('POST', '/api/timer/v1/def', { token: ADMIN, body });
    expect({ what, status: res.status, msg: res.body.msg }).toEqual({ what, status: 400, msg: expect.stringMatching(msg) });
  }
  expect(await timerCount()).toBe(before);
}

describe('input is refused, never rewritten', () => {
  it('refuses duplicate keys, prototype keys, a mis-spelled zone, blank and bidi names and lone surrogates, naming the field', async () => {
    await refusedCreates([
      ['duplicate app', `{"app":"a","app":"${APP}","name":"dup","cron":"0 0 * * *","notifyHTTPParam":{"url":"https://hooks.example.com/t","method":"POST"}}`, /^app: duplicate key "app"/],
      ['__proto__ in the body', createText(',"__proto__":{"x":1}'), /^__proto__: the key "__proto__" is not allowed/],
      ['__proto__ in the header map', `{"app":"${APP}","name":"p","cron":"0 0 * * *","notifyHTTPParam":{"url":"https://hooks.example.com/t","method":"POST","header":{"__proto__":["x"]}}}`, /^notifyHTTPParam\.header\.__proto__: the key/],
      ['constructor', createText(',"retryPolicy":{"constructor":1}'), /^retryPolicy\.constructor: the key "constructor" is not allowed/],
      ['lower-case zone', createText(',"timeZone":"europe/berlin"'), /^timeZone "europe\/berlin" is not spelled as its IANA name: use "Europe\/Berlin"$/],
      ['blank name', createText('', '   '), /^name must not be blank$/],
      ['bidi override', createText('', 'invoice\u202Efdp.exe'), /^name must not contain bidirectional control characters/],
      ['lone high surrogate', createText('', 'a\\ud800'), /^name holds a lone surrogate/],
      ['lone low surrogate', createText('', 'a\\udc00'), /^name holds a lone surrogate/],
    ]);
  });
});

describe('errors name the real cause', () => {
  it('answers the shape first, a type by its type, each message once, and 415 for a body not declared JSON', async () => {
    await refusedCreates([
      ['all schedule fields', createText(',"runAt":4102444800000,"every":"1m","maxFires":3'), /^give exactly one of cron, runAt and every \(got cron and runAt and every\)$/],
      ['maxAttempts as a string', createText(',"retryPolicy":{"maxAttempts":"3"}'), /^retryPolicy\.maxAttempts must be an integer$/],
    ]);
    const bad = await send('GET', `/api/timer/v1/def?app=${APP}&id=x`, { token: ADMIN });
    expect(bad.body.msg).toBe('id must be a positive integer timer id');
    const before = await timerCount();
    for (const contentType of [null, 'text/plain']) {
      const res = await send('POST', '/api/timer/v1/def', { token: ADMIN, body: createText(''), contentType });
      expect({ contentType, status: res.status, code: res.body.code, msg: res.body.msg }).toEqual({ contentType, status: 415, code: 41500, msg: expect.stringMatching(/send application\/json$/) });
    }
    expect(await timerCount()).toBe(before);
  });
});

/** Rows of the tables a refused request might write to. */
const written = async (): Promise<number[]> =>
  Promise.all(['timers', 'tasks', 'maintenance_windows'].map(async (t) => Number((await stack.sql<{ n: number }>(`SELECT COUNT(*) AS n FROM ${t}`))[0].n)));

describe('one id grammar: digits, as a JSON number or a digit string', () => {
  it('refuses 1e3, 1.0, -1 and "0x10" for an id in a body, a query and a list in a body, naming the field, and writes nothing', async () => {
    const created = await send('POST', '/api/timer/v1/def', { token: ADMIN, body: createText('', 'grammar') });
    const id = String(created.body.id);
    const before = await written();
    const cases: [string, string, string, string, RegExp][] = [
      ['body 1e3', 'POST', '/api/timer/v1/enable', `{"id":1e3,"app":"${APP}"}`, /^id must be written in digits \(a JSON integer or a digit string\), not 1e3$/],
      ['body 1.0', 'POST', '/api/timer/v1/enable', `{"id":${id}.0,"app":"${APP}"}`, new RegExp(`^id must be written in digits .*not ${id}\\.0$`)],
      ['body -1', 'POST', '/api/timer/v1/enable', `{"id":-1,"app":"${APP}"}`, /^id must be a positive integer timer id$/],
      ['body "0x10"', 'POST', '/api/timer/v1/enable', `{"id":"0x10","app":"${APP}"}`, /^id must be a positive integer timer id$/],
      ['delete body 1e3', 'DELETE', '/api/timer/v1/def', `{"id":1e3,"app":"${APP}"}`, /^id must be written in digits/],
      ['query 1e3', 'GET', `/api/timer/v1/def?app=${APP}&id=1e3`, '', /^id must be a positive integer timer id$/],
      ['query 1.0', 'GET', `/api/timer/v1/def?app=${APP}&id=1.0`, '', /^id must be a positive integer timer id$/],
      ['list in a body 1e3', 'POST', '/api/app/v1/maintenance', `{"app":"${APP}","timerIds":[${id},1e3],"cron":"0 0 * * *","durationMs":60000,"policy":"skip"}`, /^timerIds\[1\] must be written in digits/],
    ];
    for (const [what, method, path, body, msg] of cases) {
      const res = await send(method, path, { token: ADMIN, ...(body ? { body } : {}) });
      expect({ what, status: res.status, code: res.body.code, msg: res.body.msg }).toEqual({ what, status: 400, code: 40001, msg: expect.stringMatching(msg) });
    }
    expect(await written()).toEqual(before);
    // The same id in digits, either form, is read as the timer.
    expect((await send('GET', `/api/timer/v1/def?app=${APP}&id=${id}`, { token: ADMIN })).status).toBe(200);
    expect((await send('POST', '/api/timer/v1/unable', { token: ADMIN, body: `{"id":${id},"app":"${APP}"}` })).status).toBe(200);
  });
});

describe('a method a known path does not take', () => {
  it('answers TRACE and PUT on a known path with 405 and Allow, an unknown path with 404', async () => {
    const raw = (method: string, path: string) =>
      new Promise<{ status: number; allow?: string; body: { code?: number; msg?: string } }>((resolve, reject) => {
        httpRequest({ host: '127.0.0.1', port: stack.port('api'), method, path, headers: { authorization: `Bearer ${ADMIN}` } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body: text ? (JSON.parse(text) as { code?: number }) : {} }));
        })
          .on('error', reject)
          .end();
      });
    const trace = await raw('TRACE', '/api/timer/v1/def');
    expect(trace).toEqual({ status: 405, allow: expect.stringMatching(/^(?=.*\bPOST\b)(?=.*\bGET\b)(?=.*\bDELETE\b)(?=.*\bPUT\b)(?=.*\bPATCH\b)/), body: expect.objectContaining({ code: 40500, msg: expect.stringMatching(/^TRACE is not allowed on \/api\/timer\/v1\/def/) }) });
    expect(await raw('PUT', '/api/timer/v1/defs')).toMatchObject({ status: 405, allow: 'GET, HEAD' });
    expect((await raw('TRACE', '/health')).status).toBe(405);
    expect((await raw('TRACE', '/api/timer/v1/nothing')).status).toBe(404);
  });
});
