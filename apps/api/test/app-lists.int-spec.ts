import { ApiHarness } from './api-harness';

// The list routes of apps and tokens against real MariaDB, Redis and Pulsar: who may list what, one
// app's token never sees another app's, and no answer carries a token or its hash.
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';

describe('api app and token lists (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness();
  const issued: Record<string, { id: number; token: string }[]> = { alpha: [], beta: [] };

  beforeAll(async () => {
    await h.start();
    h.clock.set(Date.parse('2030-01-02T03:04:05Z'));
    for (const app of ['beta', 'alpha']) expect((await h.as().post('/api/app/v1/apps', { app })).body.code).toBe(0);
    for (const [app, label] of [
      ['alpha', 'deploy'],
      ['alpha', 'reports'],
      ['beta', null],
    ] as const) {
      const r = await h.as().post('/api/app/v1/tokens', label ? { app, label } : { app });
      issued[app].push(r.body.data as { id: number; token: string });
    }
    const created = await h.as().post('/api/timer/v1/def', { app: 'alpha', name: 'one', cron: '0 * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' } });
    expect(created.body.code).toBe(0);
    expect((await h.as().post('/api/app/v1/pause', { app: 'beta' })).body.code).toBe(0);
  });
  afterAll(() => h.stop());

  /** Every string anywhere in an answer. */
  const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : v && typeof v === 'object' ? Object.values(v).flatMap(strings) : []);
  const hashes = async () => ((await h.db.query('SELECT token_hash FROM app_tokens')) as { token_hash: string }[]).map((r) => r.token_hash);

  it('lists every app to the admin, by name, with its timers, live tokens and pause, paged', async () => {
    const res = await h.as().get('/api/app/v1/apps');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      code: 0,
      msg: 'ok',
      data: [
        { app: 'alpha', createdAt: expect.any(Number), liveTimers: 1, paused: false, liveTokens: 2 },
        { app: 'beta', createdAt: expect.any(Number), liveTimers: 0, paused: true, liveTokens: 1 },
      ],
      total: 2,
    });
    const second = await h.as().get('/api/app/v1/apps?pageIndex=2&pageSize=1');
    expect(second.body).toMatchObject({ data: [{ app: 'beta' }], total: 2 });
    const bad = await h.as().get('/api/app/v1/apps?pageSize=101');
    expect([bad.status, bad.body.msg]).toEqual([400, expect.stringMatching(/^pageSize /)]);
  });

  it('refuses the app list to app tokens (403) and to no token (401)', async () => {
    const asApp = await h.as(issued.alpha[0].token).get('/api/app/v1/apps');
    expect([asApp.status, asApp.body.code]).toEqual([403, 40300]);
    expect(asApp.body.msg).toMatch(/admin token/);
    expect(strings(asApp.body).join(' ')).not.toContain('beta');
    expect((await h.as(null).get('/api/app/v1/apps')).status).toBe(401);
    expect((await h.as('tmr_not-a-token').get('/api/app/v1/apps')).status).toBe(401);
  });

  it('lists an app\'s tokens newest first to the admin and to a token of that app, never a token or its hash', async () => {
    const [deploy, reports] = issued.alpha;
    const expected = {
      code: 0,
      msg: 'ok',
      data: [
        { id: reports.id, label: 'reports', createdAt: expect.any(Number), revokedAt: null },
        { id: deploy.id, label: 'deploy', createdAt: expect.any(Number), revokedAt: null },
      ],
      total: 2,
    };
    const admin = await h.as().get('/api/app/v1/tokens?app=alpha');
    expect(admin.body).toEqual(expected);
    const own = await h.as(deploy.token).get('/api/app/v1/tokens?app=alpha');
    expect(own.body).toEqual(expected);
    const secrets = [...Object.values(issued).flat().map((t) => t.token), ...(await hashes())];
    for (const body of [admin.body, own.body, (await h.as().get('/api/app/v1/apps')).body]) {
      for (const s of strings(body)) for (const secret of secrets) expect(s).not.toContain(secret);
    }
    expect((await h.as().get('/api/app/v1/tokens?app=beta')).body).toMatchObject({ data: [{ id: issued.beta[0].id, label: null, revokedAt: null }], total: 1 });
  });

  it('keeps tenants apart: another app\'s token is refused 403 and learns nothing of its tokens', async () => {
    const other = await h.as(issued.beta[0].token).get('/api/app/v1/tokens?app=alpha');
    expect([other.status, other.body.code]).toEqual([403, 40300]);
    expect(strings(other.body).join(' ')).not.toMatch(/deploy|reports/);
    expect((await h.as(issued.alpha[0].token).get('/api/app/v1/tokens?app=beta')).status).toBe(403);
    expect((await h.as(null).get('/api/app/v1/tokens?app=alpha')).status).toBe(401);
  });

  it('leaves revoked tokens out unless includeRevoked=true, and validates the query naming the field', async () => {
    const [deploy, reports] = issued.alpha;
    h.clock.set(Date.parse('2030-01-02T04:00:00Z'));
    expect((await h.as().delete('/api/app/v1/tokens', { app: 'alpha', tokenId: deploy.id })).body.code).toBe(0);
    expect((await h.as().get('/api/app/v1/tokens?app=alpha')).body).toMatchObject({ data: [{ id: reports.id }], total: 1 });
    const all = await h.as(reports.token).get('/api/app/v1/tokens?app=alpha&includeRevoked=true');
    expect(all.body).toMatchObject({ data: [{ id: reports.id, revokedAt: null }, { id: deploy.id, revokedAt: expect.any(Number) }], total: 2 });
    // The revoked token itself is refused from then on, its list included.
    expect((await h.as(deploy.token).get('/api/app/v1/tokens?app=alpha')).status).toBe(401);
    for (const [query, field] of [
      ['', 'app'],
      ['?app=no spaces', 'app'],
      ['?app=alpha&includeRevoked=yes', 'includeRevoked'],
      ['?app=alpha&token=1', 'token'],
    ]) {
      const bad = await h.as().get(`/api/app/v1/tokens${query}`);
      expect([bad.status, bad.body.code]).toEqual([400, 40001]);
      expect(bad.body.msg).toContain(field);
    }
    expect((await h.as().get('/api/app/v1/tokens?app=nobody')).body).toMatchObject({ code: 40400 });
  });
});
