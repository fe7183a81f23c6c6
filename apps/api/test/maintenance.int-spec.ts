import { RedisKeys } from '@timer/redis';
import { ApiHarness } from './api-harness';

// Maintenance windows over HTTP against real MariaDB, Redis and Pulsar, with a fixed clock.
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';
const Y = new Date().getUTCFullYear() + 1;
const at = (s: string) => Date.parse(`${Y}-${s}`);
const T = at('03-01T10:00:00Z');

describe('api maintenance windows (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness();
  let betaToken = '';
  let alphaTimer = 0;
  let betaTimer = 0;

  beforeAll(async () => {
    await h.start();
    h.clock.set(T);
    for (const app of ['alpha', 'beta']) expect((await h.as().post('/api/app/v1/apps', { app })).body.code).toBe(0);
    betaToken = (await h.as().post('/api/app/v1/tokens', { app: 'beta' })).body.data.token as string;
    const create = async (app: string) =>
      (await h.as().post('/api/timer/v1/def', { app, name: `t-${app}`, cron: '0 * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' } })).body.id as number;
    alphaTimer = await create('alpha');
    betaTimer = await create('beta');
  });
  afterAll(() => h.stop());

  const stored = async () => Number(((await h.db.query('SELECT COUNT(*) AS n FROM maintenance_windows')) as { n: number }[])[0].n);
  const mirror = async () => h.redis.hgetall(new RedisKeys(h.prefix).maintenanceWindows());
  const post = (body: object, token?: string) => h.as(token).post('/api/app/v1/maintenance', body);

  it('refuses bad input with a 400 naming the field, unknown apps and timers with 404, other apps with 403; writes nothing', async () => {
    const fixed = { app: 'alpha', from: T + 60_000, to: T + 120_000, policy: 'skip' };
    const cases: [object, RegExp][] = [
      [{ ...fixed, cron: '0 * * * * *', durationMs: 5_000 }, /from\/to and cron/],
      [{ ...fixed, to: T + 60_000 }, /\bto must be after from/],
      [{ ...fixed, to: undefined }, /\bto is required/],
      [{ app: 'alpha', to: T + 60_000, policy: 'skip' }, /\bfrom is required/],
      [{ ...fixed, from: T - 120_000, to: T - 60_000 }, /\bto must be in the future/],
      [{ ...fixed, policy: 'later' }, /\bpolicy must be one of skip, defer/],
      [{ ...fixed, policy: undefined }, /\bpolicy\b/],
      [{ ...fixed, from: 'yesterday' }, /\bfrom\b/],
      [{ app: 'alpha', cron: '0 * * * * *', durationMs: 999, policy: 'skip' }, /\bdurationMs must be an integer from 1000/],
      [{ app: 'alpha', cron: '0 * * * * *', durationMs: 7 * 86_400_000 + 1, policy: 'skip' }, /\bdurationMs\b/],
      [{ app: 'alpha', cron: '0 * * * * *', policy: 'skip' }, /\bdurationMs is required/],
      [{ app: 'alpha', durationMs: 5_000, policy: 'skip' }, /\bcron is required/],
      [{ app: 'alpha', cron: 'every day', durationMs: 5_000, policy: 'skip' }, /\bcron\b/],
      [{ ...fixed, timerIds: [] }, /\btimerIds\b/],
      [{ ...fixed, timerIds: ['abc'] }, /\btimerIds\b/],
      [{ ...fixed, extra: 1 }, /\bextra\b/],
    ];
    for (const [body, msg] of cases) {
      const res = await post(body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(res.body.msg).toMatch(msg);
    }
    const otherApps = await post({ ...fixed, timerIds: [String(alphaTimer), String(betaTimer)] });
    expect(otherApps.status).toBe(404);
    expect(otherApps.body.msg).toMatch(new RegExp(`timerIds: no timer ${betaTimer} in app alpha`));
    expect((await post({ ...fixed, app: 'nobody' })).status).toBe(404);
    expect((await post(fixed, betaToken)).status).toBe(403);
    expect((await h.as(null).post('/api/app/v1/maintenance', fixed)).status).toBe(401);
    expect(await stored()).toBe(0);
    expect(await mirror()).toEqual({});
  });

  it('creates, lists, mirrors into Redis per app, shows covered fires in the timer GET, and deletes', async () => {
    const fixed = (await post({ app: 'alpha', timerIds: [String(alphaTimer)], from: new Date(T + 60_000).toISOString(), to: T + 180_000, policy: 'defer' })).body;
    expect(fixed).toMatchObject({ code: 0, data: { app: 'alpha', timerIds: [String(alphaTimer)], from: T + 60_000, to: T + 180_000, cron: null, policy: 'defer', nextStart: null } });
    const nightly = (await post({ app: 'alpha', cron: '0 0 2 * * *', durationMs: 1_800_000, policy: 'skip' })).body;
    expect(nightly.data).toMatchObject({ timerIds: null, from: null, cron: '0 0 2 * * *', durationMs: 1_800_000, nextStart: at('03-02T02:00:00Z') });
    expect((await h.as(betaToken).get('/api/app/v1/maintenance?app=alpha')).status).toBe(403);
    const list = await h.as().get('/api/app/v1/maintenance?app=alpha');
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([fixed.data.id, nightly.data.id]);
    expect((await h.as(betaToken).get('/api/app/v1/maintenance?app=beta')).body.data).toEqual([]);

    const m = await mirror();
    expect(Object.keys(m)).toEqual(['alpha']);
    expect(JSON.parse(m.alpha)).toEqual([
      { id: fixed.data.id, app: 'alpha', timerIds: [String(alphaTimer)], fromMs: T + 60_000, toMs: T + 180_000, cron: null, durationMs: null, policy: 'defer' },
      { id: nightly.data.id, app: 'alpha', timerIds: null, fromMs: null, toMs: null, cron: '0 0 2 * * *', durationMs: 1_800_000, policy: 'skip' },
    ]);

    // The timer fires every minute: its next fires at T+60 s and T+120 s fall in the fixed window.
    const got = (await h.as().get(`/api/timer/v1/def?id=${alphaTimer}&app=alpha`)).body.data;
    expect(got.maintenance).toEqual([
      { at: T + 60_000, windowId: fixed.data.id, policy: 'defer', until: T + 180_000 },
      { at: T + 120_000, windowId: fixed.data.id, policy: 'defer', until: T + 180_000 },
    ]);
    expect((await h.as().get(`/api/timer/v1/def?id=${betaTimer}&app=beta`)).body.data.maintenance).toBeUndefined();

    expect((await h.as(betaToken).delete(`/api/app/v1/maintenance?app=alpha&id=${fixed.data.id}`)).status).toBe(403);
    expect((await h.as().delete(`/api/app/v1/maintenance?app=beta&id=${fixed.data.id}`)).status).toBe(404);
    expect((await h.as().delete(`/api/app/v1/maintenance?app=alpha&id=x`)).body.msg).toMatch(/\bid\b/);
    expect((await h.as().delete(`/api/app/v1/maintenance?app=alpha&id=${fixed.data.id}`)).body.code).toBe(0);
    expect(JSON.parse((await mirror()).alpha).map((w: { id: string }) => w.id)).toEqual([nightly.data.id]);
    expect((await h.as().delete(`/api/app/v1/maintenance?app=alpha&id=${nightly.data.id}`)).body.code).toBe(0);
    expect(await mirror()).toEqual({});
    expect(await stored()).toBe(0);
    expect((await h.as().delete(`/api/app/v1/maintenance?app=alpha&id=${nightly.data.id}`)).status).toBe(404);
  });
});
