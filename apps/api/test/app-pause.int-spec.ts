import { PausedApps, RedisKeys, RESUME_MARGIN_MS, SliceIndex } from '@timer/redis';
import { ApiHarness } from './api-harness';

// App-wide pause and resume, and a disable that deletes the fires not yet due, against real MariaDB,
// Redis and Pulsar with a fixed clock (never sleeps).
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';
const Y = new Date().getUTCFullYear() + 1;
const at = (s: string) => Date.parse(`${Y}-${s}`);

describe('api app pause/resume and disable (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness();
  let alphaToken = '';
  let betaToken = '';

  beforeAll(async () => {
    await h.start();
    h.clock.set(at('06-01T10:00:00Z'));
    for (const app of ['alpha', 'beta']) expect((await h.as().post('/api/app/v1/apps', { app })).body.code).toBe(0);
    alphaToken = (await h.as().post('/api/app/v1/tokens', { app: 'alpha' })).body.data.token as string;
    betaToken = (await h.as().post('/api/app/v1/tokens', { app: 'beta' })).body.data.token as string;
  });
  afterAll(() => h.stop());

  async function createEnabled(app: string, cron: string): Promise<number> {
    const res = await h.as().post('/api/timer/v1/def', { app, name: `t-${Math.random().toString(36).slice(2)}`, cron, notifyHTTPParam: { url: HOOK, method: 'POST' } });
    const id = res.body.id as number;
    expect((await h.as().post('/api/timer/v1/enable', { id, app })).body.data).toMatchObject({ changed: true });
    return id;
  }
  type Row = { run_at: number; status: number; error: string | null };
  const rows = async (id: number): Promise<Row[]> =>
    ((await h.db.query('SELECT run_at, status, error FROM tasks WHERE timer_id = ? ORDER BY run_at', [id])) as Row[]).map((r) => ({ ...r, run_at: Number(r.run_at) }));
  const pauseColumns = async (app: string) => (await h.db.query('SELECT paused_at, resumed_at FROM apps WHERE app = ?', [app])) as unknown[];
  const mirror = async () => h.redis.hgetall(new RedisKeys(h.prefix).pausedApps());
  const indexed = async (id: number) => (await h.indexEntries()).filter((e) => e.member.startsWith(`${id}-`)).map((e) => e.score);

  it('refuses bad input naming the field, unknown apps and other apps\' tokens, and writes nothing', async () => {
    for (const path of ['pause', 'resume']) {
      const missing = await h.as().post(`/api/app/v1/${path}`, {});
      expect(missing.status).toBe(400);
      expect(missing.body.msg).toMatch(/\bapp\b/);
      const bad = await h.as().post(`/api/app/v1/${path}`, { app: 'no spaces please' });
      expect(bad.status).toBe(400);
      expect(bad.body.msg).toMatch(/\bapp\b/);
      expect((await h.as().post(`/api/app/v1/${path}`, { app: 'alpha', extra: 1 })).status).toBe(400);
      expect((await h.as().post(`/api/app/v1/${path}`, { app: 'nobody' })).body).toMatchObject({ code: 40400 });
      expect((await h.as(betaToken).post(`/api/app/v1/${path}`, { app: 'alpha' })).status).toBe(403);
      expect((await h.as(null).post(`/api/app/v1/${path}`, { app: 'alpha' })).status).toBe(401);
    }
    expect(await pauseColumns('alpha')).toEqual([{ paused_at: null, resumed_at: null }]);
    expect(await mirror()).toEqual({});
  });

  it('pauses (idempotent), then resumes at now + the margin, recording the paused interval\'s pending fires missed', async () => {
    const T = at('06-01T10:00:00Z');
    h.clock.set(T);
    const id = await createEnabled('alpha', '*/10 * * * * *');
    const other = await createEnabled('beta', '*/10 * * * * *');

    const paused = await h.as(alphaToken).post('/api/app/v1/pause', { app: 'alpha' });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ code: 0, msg: 'ok', data: { app: 'alpha', changed: true, paused: true, pausedAt: T, resumedAt: null, missedFires: 0 } });
    expect(await mirror()).toEqual({ alpha: `${T}::${T}` });
    h.clock.set(T + 5_000);
    expect((await h.as().post('/api/app/v1/pause', { app: 'alpha' })).body.data).toEqual({ app: 'alpha', changed: false, paused: true, pausedAt: T, resumedAt: null, missedFires: 0 });
    // Nothing is settled by the pause itself.
    expect((await rows(id)).filter((r) => r.status !== 0)).toEqual([]);

    const now = T + 60_000;
    h.clock.set(now);
    const R = now + RESUME_MARGIN_MS;
    const resumed = await h.as().post('/api/app/v1/resume', { app: 'alpha' });
    // [T, T + 62 s): the fires at T, T + 10 s, ..., T + 60 s.
    expect(resumed.body.data).toEqual({ app: 'alpha', changed: true, paused: false, pausedAt: T, resumedAt: R, missedFires: 7 });
    const after = await rows(id);
    expect(after.filter((r) => r.status === 4).map((r) => [r.run_at - T, r.error])).toEqual([0, 10, 20, 30, 40, 50, 60].map((s) => [s * 1000, 'paused']));
    expect(after.find((r) => r.run_at === T + 70_000)).toMatchObject({ status: 0, error: null });
    expect((await rows(other)).filter((r) => r.status !== 0)).toEqual([]);
    expect(await pauseColumns('alpha')).toEqual([{ paused_at: T, resumed_at: R }]);
    expect(await mirror()).toEqual({ alpha: `${T}:${R}:${now}` });
    expect((await h.as().post('/api/app/v1/resume', { app: 'alpha' })).body.data).toEqual({ app: 'alpha', changed: false, paused: false, pausedAt: T, resumedAt: R, missedFires: 0 });
    // Resuming an app never paused changes nothing either.
    expect((await h.as().post('/api/app/v1/resume', { app: 'beta' })).body.data).toEqual({ app: 'beta', changed: false, paused: false, pausedAt: null, resumedAt: null, missedFires: 0 });
    await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' });
    await h.as().post('/api/timer/v1/unable', { id: other, app: 'beta' });
  });

  it('answers 503 with Retry-After and changes nothing when the Redis mirror cannot be written', async () => {
    h.clock.set(at('06-01T11:00:00Z'));
    const paused = h.app.get(PausedApps);
    const spy = jest.spyOn(paused, 'pause').mockRejectedValueOnce(new Error('redis down (injected)'));
    const res = await h.as().post('/api/app/v1/pause', { app: 'beta' });
    spy.mockRestore();
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toMatchObject({ code: 50300 });
    expect(res.body.msg).not.toMatch(/redis/i);
    expect(await pauseColumns('beta')).toEqual([{ paused_at: null, resumed_at: null }]);
  });

  describe('disable', () => {
    it('deletes the pending fires after now from MySQL and the slice index; due ones stay; enable brings them back', async () => {
      const T = at('06-01T12:00:00Z');
      h.clock.set(T);
      const id = await createEnabled('alpha', '*/10 * * * * *');
      const created = (await rows(id)).length;
      expect(created).toBeGreaterThan(1_000);
      h.clock.set(T + 25_000); // fires at T, T + 10 s, T + 20 s are due
      const res = await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' });
      expect(res.body.data).toEqual({ changed: true, version: 3, removedFires: created - 3 });
      expect((await rows(id)).map((r) => r.run_at - T)).toEqual([0, 10_000, 20_000]);
      expect((await indexed(id)).filter((s) => s > T + 25_000)).toEqual([]);
      expect((await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' })).body.data).toEqual({ changed: false, version: 3, removedFires: 0 });
      // Enable writes the near future from now (the harness's 3 hours): as many fires as the first time.
      const enabled = await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
      expect(enabled.body.data).toMatchObject({ changed: true, fires: created });
      expect((await indexed(id)).filter((s) => s > T + 25_000)).toHaveLength(created);
    });

    it('rolls back (503, retry) when the slice index cannot be cleaned: the timer stays enabled with its fires', async () => {
      h.clock.set(at('06-01T13:00:00Z'));
      const id = await createEnabled('alpha', '0 * * * * *');
      const before = await rows(id);
      const spy = jest.spyOn(h.app.get(SliceIndex), 'removeTimer').mockRejectedValueOnce(new Error('redis down (injected)'));
      const res = await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' });
      spy.mockRestore();
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(await rows(id)).toEqual(before);
      expect((await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`)).body.data).toMatchObject({ status: 2, version: 2 });
    });
  });
});
