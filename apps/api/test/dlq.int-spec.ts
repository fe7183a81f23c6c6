import { FireClaimRepository, TaskStatus } from '@timer/dal';
import { ApiHarness } from './api-harness';

// The dead-letter routes and the failure webhook route over HTTP against real MariaDB, Redis and
// Pulsar: dead letters are failed rows written here (the executor's part is the e2e spec's).
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';

describe('api dead letters and failure webhook (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness();
  let betaToken = '';
  let alphaTimer = 0;
  let betaTimer = 0;
  const T = h.clock.now() - 3_600_000;

  async function createTimer(app: string): Promise<number> {
    const res = await h.as().post('/api/timer/v1/def', { app, name: `t-${Math.random().toString(36).slice(2)}`, cron: '0 0 1 1 *', notifyHTTPParam: { url: HOOK, method: 'POST' } });
    expect(res.body.code).toBe(0);
    return res.body.id as number;
  }
  /** A fire row as the executor leaves a dead letter (status failed after `attempt` attempts). */
  async function fire(app: string, timerId: number, runAt: number, status: number, attempt = 3, httpStatus: number | null = 500): Promise<string> {
    await h.db.query('INSERT INTO tasks (app, timer_id, run_at, status, attempt, http_status, error) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      app,
      timerId,
      runAt,
      status,
      attempt,
      httpStatus,
      httpStatus === null ? null : `HTTP ${httpStatus}`,
    ]);
    return `${timerId}-${runAt}`;
  }
  const row = async (id: string) => {
    const [timerId, runAt] = id.split('-');
    const [r] = (await h.db.query('SELECT status, attempt, dlq_purged_at FROM tasks WHERE timer_id = ? AND run_at = ?', [timerId, runAt])) as {
      status: number;
      attempt: number;
      dlq_purged_at: string | null;
    }[];
    return r;
  };
  const list = async (app: string, token?: string) => h.as(token).get(`/api/app/v1/dlq?app=${app}&pageSize=100`);

  beforeAll(async () => {
    await h.start();
    for (const app of ['alpha', 'beta']) expect((await h.as().post('/api/app/v1/apps', { app })).body.code).toBe(0);
    betaToken = (await h.as().post('/api/app/v1/tokens', { app: 'beta' })).body.data.token as string;
    alphaTimer = await createTimer('alpha');
    betaTimer = await createTimer('beta');
  });
  afterAll(() => h.stop());

  it('lists an app\'s dead letters only, latest run time first, and refuses other apps\' tokens', async () => {
    const older = await fire('alpha', alphaTimer, T, TaskStatus.Failed, 3, 500);
    const newer = await fire('alpha', alphaTimer, T + 1_000, TaskStatus.Failed, 1, 404);
    await fire('alpha', alphaTimer, T + 2_000, TaskStatus.Succeeded, 1, 200);
    await fire('beta', betaTimer, T, TaskStatus.Failed);

    const res = await list('alpha');
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(2);
    expect(res.body.data.map((l: { fireId: string }) => l.fireId)).toEqual([newer, older]);
    expect(res.body.data[1]).toMatchObject({ fireId: older, timerId: String(alphaTimer), app: 'alpha', runAt: T, attempts: 3, reason: 'attempts exhausted', error: 'HTTP 500', httpStatus: 500 });
    expect(res.body.data[0]).toMatchObject({ attempts: 1, reason: 'not retryable', httpStatus: 404 });
    expect(Math.abs(res.body.data[0].failedAt - Date.now())).toBeLessThan(60_000);

    expect((await list('beta', betaToken)).body.total).toBe(1);
    expect((await list('alpha', betaToken)).status).toBe(403);
    expect((await list('nobody')).body.code).toBe(40400);
    expect((await h.as().get('/api/app/v1/dlq')).status).toBe(400);
  });

  it('refuses a replay or purge without exactly one valid selector, naming the field, and changes nothing', async () => {
    const before = await list('alpha');
    const cases: [unknown, RegExp][] = [
      [{ app: 'alpha' }, /one of fireIds, timerId or all/],
      [{ app: 'alpha', all: true, timerId: String(alphaTimer) }, /timerId and all/],
      [{ app: 'alpha', fireIds: [] }, /fireIds/],
      [{ app: 'alpha', fireIds: ['nope'] }, /fireIds/],
      [{ app: 'alpha', fireIds: Array.from({ length: 501 }, (_, i) => `${alphaTimer}-${i}`) }, /fireIds may name at most 500/],
      [{ app: 'alpha', timerId: 'x' }, /timerId/],
      [{ app: 'alpha', all: false }, /all must be true/],
      [{ app: 'alpha', all: true, extra: 1 }, /extra/],
    ];
    for (const path of ['replay', 'purge']) {
      for (const [body, message] of cases) {
        const res = await h.as().post(`/api/app/v1/dlq/${path}`, body);
        expect([path, res.status]).toEqual([path, 400]);
        expect(res.body.msg).toMatch(message);
      }
      expect((await h.as(betaToken).post(`/api/app/v1/dlq/${path}`, { app: 'alpha', all: true })).status).toBe(403);
    }
    expect((await list('alpha')).body).toEqual(before.body);
  });

  it('replays exactly the selected letters of the app, once; a later ops replay of the same fire is a no-op', async () => {
    const [newer, older] = (await list('alpha')).body.data.map((l: { fireId: string }) => l.fireId) as string[];
    const betaFire = `${betaTimer}-${T}`;
    const delivered = `${alphaTimer}-${T + 2_000}`;
    const res = await h.as().post('/api/app/v1/dlq/replay', { app: 'alpha', fireIds: [older, betaFire, delivered] });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ replayed: 1, fireIds: [older], notFound: [betaFire, delivered], remaining: 0 });
    expect(await row(older)).toMatchObject({ status: TaskStatus.Pending, attempt: 0 });
    expect(await row(newer)).toMatchObject({ status: TaskStatus.Failed });
    expect(await row(betaFire)).toMatchObject({ status: TaskStatus.Failed });
    expect((await list('alpha')).body.data.map((l: { fireId: string }) => l.fireId)).toEqual([newer]);

    // Asked again before it settles: not a dead letter any more, nothing published twice.
    expect((await h.as().post('/api/app/v1/dlq/replay', { app: 'alpha', fireIds: [older] })).body.data).toMatchObject({ replayed: 0, notFound: [older] });

    // The executor's fence: the replay's attempt 1 is claimed once; a second message of it is refused.
    const claims = new FireClaimRepository(h.db);
    const [timerId, runAt] = older.split('-');
    const claim = { timerId, runAt: Number(runAt), attempt: 1, nowMs: Date.now(), leaseMs: 60_000 };
    expect(await claims.claim({ ...claim, token: 'a' })).toBe(true);
    expect(await claims.claim({ ...claim, token: 'b' })).toBe(false);
    await h.db.query('UPDATE tasks SET status = ?, claimed_by = NULL WHERE timer_id = ? AND run_at = ?', [TaskStatus.Succeeded, timerId, runAt]);
    // `ops replay` of the fire's old Pulsar dead letter: the reopen finds no failed row, the claim refuses.
    expect(await claims.reopenFailed({ timerId, runAt: Number(runAt) })).toBe(false);
    expect(await claims.claim({ ...claim, token: 'c' })).toBe(false);
    expect(await row(older)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1 });
  });

  it('replays a timer\'s or all letters in pages with `remaining`', async () => {
    const extra = await Promise.all([1, 2, 3].map((i) => fire('alpha', alphaTimer, T + 10_000 + i, TaskStatus.Failed)));
    const res = await h.as().post('/api/app/v1/dlq/replay', { app: 'alpha', timerId: alphaTimer });
    expect(res.status).toBe(200);
    expect(res.body.data.replayed).toBe(4);
    expect(res.body.data.remaining).toBe(0);
    for (const id of extra) expect(await row(id)).toMatchObject({ status: TaskStatus.Pending, attempt: 0 });
    expect((await list('alpha')).body.total).toBe(0);
    expect((await list('beta', betaToken)).body.total).toBe(1);
  });

  it('purges the app\'s letters only; the failed records stay', async () => {
    const a = await fire('alpha', alphaTimer, T + 20_000, TaskStatus.Failed);
    const b = await fire('alpha', alphaTimer, T + 21_000, TaskStatus.Failed);
    expect((await h.as().post('/api/app/v1/dlq/purge', { app: 'alpha', fireIds: [a, `${betaTimer}-${T}`] })).body.data).toEqual({ purged: 1 });
    expect((await list('alpha')).body.data.map((l: { fireId: string }) => l.fireId)).toEqual([b]);
    expect((await h.as().post('/api/app/v1/dlq/purge', { app: 'alpha', all: true })).body.data).toEqual({ purged: 1 });
    expect((await list('alpha')).body.total).toBe(0);
    expect((await list('beta', betaToken)).body.total).toBe(1);
    expect(await row(a)).toMatchObject({ status: TaskStatus.Failed });
    expect((await row(b)).dlq_purged_at).not.toBeNull();
    // A purged letter is no longer replayable here.
    expect((await h.as().post('/api/app/v1/dlq/replay', { app: 'alpha', fireIds: [a] })).body.data).toMatchObject({ replayed: 0, notFound: [a] });
    // An operator's replay (`ops replay`) of a purged letter reopens it unpurged: should it fail again, it is listed again.
    const [timerId, runAt] = a.split('-');
    expect(await new FireClaimRepository(h.db).reopenFailed({ timerId, runAt: Number(runAt) })).toBe(true);
    expect(await row(a)).toMatchObject({ status: TaskStatus.Pending, dlq_purged_at: null });
  });

  it('sets and removes the failure webhook; refuses private URLs, bad headers and other apps', async () => {
    const put = (body: unknown, token?: string) => h.as(token).put('/api/app/v1/failure-webhook', body);
    const stored = async () => {
      const { w } = ((await h.db.query('SELECT failure_webhook AS w FROM apps WHERE app = ?', ['alpha'])) as { w: unknown }[])[0];
      return typeof w === 'string' ? (JSON.parse(w) as unknown) : w;
    };

    const bad: [unknown, RegExp][] = [
      [{ app: 'alpha' }, /failureWebhook/],
      [{ app: 'alpha', failureWebhook: { url: 'http://127.0.0.1/x' } }, /failureWebhook\.url .*private/],
      [{ app: 'alpha', failureWebhook: { url: 'ftp://x' } }, /url/],
      [{ app: 'alpha', failureWebhook: { url: HOOK, headers: { 'X-Timer-Signature': 'x' } } }, /headers/],
      [{ app: 'alpha', failureWebhook: [] }, /failureWebhook/],
    ];
    for (const [body, message] of bad) {
      const res = await put(body);
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(message);
    }
    expect(await stored()).toBeNull();
    expect((await put({ app: 'alpha', failureWebhook: { url: HOOK } }, betaToken)).status).toBe(403);
    expect((await put({ app: 'nobody', failureWebhook: { url: HOOK } })).body.code).toBe(40400);

    const webhook = { url: HOOK, headers: { Authorization: 'Bearer abc' } };
    const res = await put({ app: 'alpha', failureWebhook: webhook });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ app: 'alpha', failureWebhook: webhook });
    expect(await stored()).toEqual(webhook);
    expect((await put({ app: 'alpha', failureWebhook: null })).body.data).toEqual({ app: 'alpha', failureWebhook: null });
    expect(await stored()).toBeNull();
  });

  it("a timer's own failureWebhook: the app's rules on create, PUT and PATCH (null removes it), shown by GET and the versions", async () => {
    const def = '/api/timer/v1/def';
    const body = (over: Record<string, unknown> = {}) => ({ app: 'alpha', name: 'own-hook', cron: '0 0 1 1 *', notifyHTTPParam: { url: HOOK, method: 'POST' }, ...over });
    const get = async (id: number) => (await h.as().get(`${def}?id=${id}&app=alpha`)).body.data as Record<string, unknown>;
    const timers = () => h.count("SELECT COUNT(*) AS n FROM timers WHERE app = 'alpha'");
    const before = await timers();
    const bad: [unknown, RegExp][] = [
      [{ url: 'http://127.0.0.1/x' }, /^failureWebhook\.url points to a loopback or private address/],
      [{ url: 'ftp://x' }, /failureWebhook\.url/],
      [{ url: HOOK, headers: { 'X-Timer-Signature': 'x' } }, /failureWebhook\.headers/],
      [{ headers: {} }, /failureWebhook\.url/],
    ];
    for (const [failureWebhook, message] of bad) {
      const res = await h.as().post(def, body({ failureWebhook }));
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(message);
    }
    expect(await timers()).toBe(before);

    const hook = { url: `${HOOK}/own`, headers: { Authorization: 'Bearer own' } };
    const created = await h.as().post(def, body({ failureWebhook: hook }));
    expect(created.body.code).toBe(0);
    const id = created.body.id as number;
    expect((await get(id)).failureWebhook).toEqual({ url: hook.url, headers: { Authorization: ['Bearer own'] } });

    const refused = await h.as().patch(def, { id, app: 'alpha', version: 1, failureWebhook: { url: 'http://10.0.0.1/' } });
    expect(refused.status).toBe(400);
    expect((await get(id)).version).toBe(1);
    expect((await h.as().patch(def, { id, app: 'alpha', version: 1, name: 'own-hook-2' })).body.code).toBe(0);
    expect((await get(id)).failureWebhook).toEqual({ url: hook.url, headers: { Authorization: ['Bearer own'] } });
    expect((await h.as().patch(def, { id, app: 'alpha', version: 2, failureWebhook: null })).body.code).toBe(0);
    expect((await get(id)).failureWebhook).toBeNull();
    expect((await h.as().put(def, { ...body({ failureWebhook: { url: `${HOOK}/put` } }), id, version: 3 })).body.code).toBe(0);
    expect((await get(id)).failureWebhook).toEqual({ url: `${HOOK}/put` });

    const versions = (await h.as().get(`${def}/versions?id=${id}&app=alpha`)).body.data as { version: number; failureWebhook: { url: string } | null }[];
    expect(versions.map((v) => [v.version, v.failureWebhook?.url ?? null])).toEqual([
      [4, `${HOOK}/put`],
      [3, null],
      [2, hook.url],
      [1, hook.url],
    ]);
  });
});
