import { request as httpRequest, Server } from 'http';
import { AddressInfo } from 'net';
import { ADMIN_TOKEN, ApiHarness } from './api-harness';

// Rate limit, open mode and the private-callback switch, each on its own api instance.
jest.setTimeout(60_000);

const timer = (app: string, url = 'https://hooks.example.com/t') => ({ app, name: `n${Math.random()}`, cron: '* * * * *', notifyHTTPParam: { url, method: 'POST' } });

describe('api rate limit (TIMER_RATE_LIMIT_PER_SEC=3)', () => {
  const h = new ApiHarness({ TIMER_RATE_LIMIT_PER_SEC: '3' });
  beforeAll(() => h.start());
  afterAll(() => h.stop());

  it('answers 429 with Retry-After once an app used its budget for the second; other apps are unaffected', async () => {
    const statuses: number[] = [];
    let limited: { status: number; headers: Record<string, string>; body: { code: number; msg: string } } | undefined;
    for (let i = 0; i < 4; i++) {
      const res = await h.as().get('/api/timer/v1/defs?app=busy');
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(limited?.body.code).toBe(42900);
    expect(limited?.body.msg).toMatch(/rate limit/);
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await h.as().get('/api/timer/v1/defs?app=calm')).status).toBe(200);
    // Rejected creates write nothing.
    const before = await h.count('SELECT COUNT(*) AS n FROM timers');
    expect((await h.as().post('/api/timer/v1/def', timer('busy'))).status).toBe(429);
    expect(await h.count('SELECT COUNT(*) AS n FROM timers')).toBe(before);
    // The counter is shared through Redis under the instance's prefix, with an expiry.
    const ttl = await h.redis.pttl(`${h.prefix}ratelimit:busy`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
  });
});

describe('failed authentications per client address (TIMER_AUTH_FAILURES_PER_MIN=3)', () => {
  const h = new ApiHarness({ TIMER_AUTH_FAILURES_PER_MIN: '3' });
  let port: number;
  beforeAll(async () => {
    await h.start();
    const server = h.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => h.stop());

  /** A request from a chosen loopback source address (the api sees it as the client's address). */
  function send(from: string, token: string, method = 'GET', path = '/api/timer/v1/defs?app=guarded', body?: object) {
    const payload = body ? Buffer.from(JSON.stringify(body)) : undefined;
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(payload.length) });
    return new Promise<{ status: number; headers: Record<string, unknown>; body: { code: number; msg: string } }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, localAddress: from, method, path, headers }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as { code: number; msg: string } }));
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  it('answers 429 with Retry-After to failures past 3 from one address; a good token from it still works', async () => {
    for (let i = 0; i < 5; i++) expect((await send('127.0.0.3', ADMIN_TOKEN)).status).toBe(200); // successes do not count
    for (const token of ['tmr_guess1', `${ADMIN_TOKEN}x`, 'tmr_guess2']) {
      const res = await send('127.0.0.3', token);
      expect({ token, status: res.status }).toEqual({ token, status: 401 });
    }
    const refused = await send('127.0.0.3', 'tmr_guess3');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe(42901);
    expect(refused.body.msg).toMatch(/too many failed authentications from this address/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    const before = await h.count('SELECT COUNT(*) AS n FROM timers');
    const create = { app: 'guarded', name: 'blocked', cron: '* * * * *', notifyHTTPParam: { url: 'https://hooks.example.com/t', method: 'POST' } };
    expect((await send('127.0.0.3', 'tmr_guess4', 'POST', '/api/timer/v1/def', create)).status).toBe(429);
    expect(await h.count('SELECT COUNT(*) AS n FROM timers')).toBe(before);
    expect((await send('127.0.0.3', ADMIN_TOKEN)).status).toBe(200);
    // The counter lives in Redis under the instance's prefix, with the one-minute window as expiry.
    const ttl = await h.redis.pttl(`${h.prefix}authfail:127.0.0.3`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('leaves other addresses alone', async () => {
    expect((await send('127.0.0.4', ADMIN_TOKEN)).status).toBe(200);
    expect((await send('127.0.0.4', 'tmr_wrong')).status).toBe(401);
  });
});

describe('api with TIMER_AUTH_DISABLED=true and TIMER_CALLBACK_ALLOW_PRIVATE=true', () => {
  const h = new ApiHarness({ TIMER_AUTH_DISABLED: 'true', TIMER_CALLBACK_ALLOW_PRIVATE: 'true', TIMER_ADMIN_TOKEN: '' });
  beforeAll(() => h.start());
  afterAll(() => h.stop());

  it('runs open, and accepts loopback callbacks', async () => {
    const res = await h.as(null).post('/api/timer/v1/def', timer('open', 'http://127.0.0.1:9999/hook'));
    expect(res.body).toMatchObject({ code: 0 });
    expect((await h.as(null).get(`/api/timer/v1/def?id=${res.body.id}&app=open`)).body.data.notifyHTTPParam.url).toBe('http://127.0.0.1:9999/hook');
    expect((await h.as(null).post('/api/app/v1/apps', { app: 'made-open' })).body.code).toBe(0);
  });
});
