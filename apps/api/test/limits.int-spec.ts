import { ApiHarness } from './api-harness';

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
