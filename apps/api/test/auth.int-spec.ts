import { ADMIN_TOKEN, ApiHarness } from './api-harness';

// Authentication, app isolation and app administration against the real stack.
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';
const body = (app: string, name: string) => ({ app, name, cron: '0 * * * * *', notifyHTTPParam: { url: HOOK, method: 'GET' } });

describe('api auth and app isolation', () => {
  const h = new ApiHarness();
  let tokenA: string;
  let tokenIdA: number;
  let timerB: number;

  beforeAll(async () => {
    await h.start();
    for (const app of ['appa', 'appb']) {
      const res = await h.as().post('/api/app/v1/apps', { app });
      expect(res.body).toEqual({ code: 0, msg: 'ok', data: { app } });
    }
    const issued = await h.as().post('/api/app/v1/tokens', { app: 'appa', label: 'ci' });
    expect(issued.status).toBe(200);
    expect(issued.body.data.token).toMatch(/^tmr_/);
    tokenA = issued.body.data.token;
    tokenIdA = issued.body.data.id;
    const created = await h.as().post('/api/timer/v1/def', body('appb', 'secret-timer'));
    timerB = created.body.id;
  });
  afterAll(() => h.stop());

  describe('401', () => {
    it.each([
      ['no header', undefined],
      ['empty bearer', 'Bearer '],
      ['basic scheme', 'Basic YWRtaW46YWRtaW4='],
      ['wrong admin token', `Bearer ${ADMIN_TOKEN}x`],
      ['unknown app token', 'Bearer tmr_doesnotexist'],
      ['garbage', 'Bearer \u00e9\u00e9'],
    ])('%s -> 401 envelope', async (_why, header) => {
      const r = h.http().get('/api/timer/v1/defs?app=appa');
      const res = await (header === undefined ? r : r.set('Authorization', header));
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(40100);
      expect(res.body.msg).toEqual(expect.any(String));
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('does not write anything for an unauthenticated create', async () => {
      const before = await h.count('SELECT COUNT(*) AS n FROM timers');
      const res = await h.http().post('/api/timer/v1/def').send(body('appa', 'sneaky'));
      expect(res.status).toBe(401);
      expect(await h.count('SELECT COUNT(*) AS n FROM timers')).toBe(before);
    });
  });

  describe('an app token acts on its own app only', () => {
    it('manages timers of its own app', async () => {
      const a = h.as(tokenA);
      const created = await a.post('/api/timer/v1/def', body('appa', 'mine'));
      expect(created.body.code).toBe(0);
      const id = created.body.id;
      expect((await a.get(`/api/timer/v1/def?id=${id}&app=appa`)).body.data.name).toBe('mine');
      expect((await a.get('/api/timer/v1/defs?app=appa')).body.total).toBe(1);
      expect((await a.post('/api/timer/v1/enable', { id, app: 'appa' })).body.code).toBe(0);
      expect((await a.post('/api/timer/v1/run', { id, app: 'appa' })).body.code).toBe(0);
      expect((await a.get(`/api/task/v1/records?app=appa&timerID=${id}`)).body.code).toBe(0);
      expect((await a.post('/api/timer/v1/unable', { id, app: 'appa' })).body.code).toBe(0);
      expect((await a.delete('/api/timer/v1/def', { id, app: 'appa' })).body.code).toBe(0);
    });

    it('cannot see, list, enable, disable, run, delete or read records of another app\'s timer', async () => {
      const a = h.as(tokenA);
      const expectStatus = async (what: string, p: Promise<{ status: number; body: { code: number } }>, status: number) => {
        const res = await p;
        expect({ what, status: res.status, code: res.body.code }).toEqual({ what, status, code: status * 100 });
      };
      await expectStatus('get', a.get(`/api/timer/v1/def?id=${timerB}&app=appb`), 404);
      await expectStatus('get via own app', a.get(`/api/timer/v1/def?id=${timerB}&app=appa`), 404);
      await expectStatus('enable', a.post('/api/timer/v1/enable', { id: timerB, app: 'appb' }), 404);
      await expectStatus('enable via own app', a.post('/api/timer/v1/enable', { id: timerB, app: 'appa' }), 404);
      await expectStatus('unable', a.post('/api/timer/v1/unable', { id: timerB, app: 'appb' }), 404);
      await expectStatus('run', a.post('/api/timer/v1/run', { id: timerB, app: 'appb' }), 404);
      await expectStatus('delete', a.delete('/api/timer/v1/def', { id: timerB, app: 'appb' }), 404);
      await expectStatus('delete via own app', a.delete('/api/timer/v1/def', { id: timerB, app: 'appa' }), 404);
      await expectStatus('records', a.get(`/api/task/v1/records?app=appb&timerID=${timerB}`), 404);
      await expectStatus('records via own app', a.get(`/api/task/v1/records?app=appa&timerID=${timerB}`), 404);
      await expectStatus('list', a.get('/api/timer/v1/defs?app=appb'), 403);
      await expectStatus('create', a.post('/api/timer/v1/def', body('appb', 'planted')), 403);
      // Nothing of app B changed.
      const rows = (await h.db.query('SELECT status, deleted_at FROM timers WHERE id = ?', [timerB])) as { status: number; deleted_at: unknown }[];
      expect(rows).toEqual([{ status: 1, deleted_at: null }]);
      expect(await h.count('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ?', [timerB])).toBe(0);
      expect(await h.count("SELECT COUNT(*) AS n FROM timers WHERE app = 'appb'")).toBe(1);
    });

    it('gets 403 on app administration of another app, and on admin-only routes', async () => {
      const a = h.as(tokenA);
      for (const [what, p] of [
        ['create app', a.post('/api/app/v1/apps', { app: 'appc' })],
        ['issue token (own app)', a.post('/api/app/v1/tokens', { app: 'appa' })],
        ['issue token (other app)', a.post('/api/app/v1/tokens', { app: 'appb' })],
        ['rotate other secret', a.post('/api/app/v1/secret', { app: 'appb' })],
        ['revoke other token', a.delete('/api/app/v1/tokens', { app: 'appb', tokenId: 1 })],
      ] as const) {
        const res = await p;
        expect({ what, status: res.status, code: res.body.code }).toEqual({ what, status: 403, code: 40300 });
      }
      expect(await h.count("SELECT COUNT(*) AS n FROM apps WHERE app = 'appc'")).toBe(0);
      expect(await h.count("SELECT COUNT(*) AS n FROM app_tokens WHERE app = 'appb'")).toBe(0);
    });

    it('rotates its own signing secret, and a revoked token stops working', async () => {
      const rotated = await h.as(tokenA).post('/api/app/v1/secret', { app: 'appa' });
      expect(rotated.status).toBe(200);
      expect(rotated.body.data.secret).toEqual(expect.any(String));
      const stored = (await h.db.query("SELECT signing_secret AS s FROM apps WHERE app = 'appa'")) as { s: string }[];
      expect(stored[0].s).toBe(rotated.body.data.secret);
      // The replaced secret signs for a day by default, for overlapSeconds when given; 0 replaces it at once.
      const overlapping = await h.as(tokenA).post('/api/app/v1/secret', { app: 'appa' });
      const short = await h.as(tokenA).post('/api/app/v1/secret', { app: 'appa', overlapSeconds: 60 });
      expect(overlapping.body.data.previousSecretValidUntil - short.body.data.previousSecretValidUntil).toBe(86_400_000 - 60_000); // the test clock stands still
      const [prev] = (await h.db.query("SELECT previous_signing_secret AS p, previous_secret_until AS u FROM apps WHERE app = 'appa'")) as { p: string; u: string }[];
      expect({ p: prev.p, u: Number(prev.u) }).toEqual({ p: overlapping.body.data.secret, u: short.body.data.previousSecretValidUntil });
      expect((await h.as(tokenA).post('/api/app/v1/secret', { app: 'appa', overlapSeconds: 0 })).body.data.previousSecretValidUntil).toBeNull();
      expect((await h.as(tokenA).post('/api/app/v1/secret', { app: 'appa', overlapSeconds: -1 })).status).toBe(400);

      const second = await h.as().post('/api/app/v1/tokens', { app: 'appa' });
      const other = second.body.data.token as string;
      const revoked = await h.as(other).delete('/api/app/v1/tokens', { app: 'appa', tokenId: tokenIdA });
      expect(revoked.body).toEqual({ code: 0, msg: 'ok' });
      expect((await h.as(tokenA).get('/api/timer/v1/defs?app=appa')).status).toBe(401);
      expect((await h.as(other).get('/api/timer/v1/defs?app=appa')).status).toBe(200);
      expect((await h.as().delete('/api/app/v1/tokens', { app: 'appa', tokenId: tokenIdA })).status).toBe(404);
    });
  });

  describe('admin', () => {
    it('creates an app on its first timer for it, and apps explicitly (409 when it exists)', async () => {
      expect(await h.count("SELECT COUNT(*) AS n FROM apps WHERE app = 'fresh'")).toBe(0);
      expect((await h.as().post('/api/timer/v1/def', body('fresh', 'first'))).body.code).toBe(0);
      expect(await h.count("SELECT COUNT(*) AS n FROM apps WHERE app = 'fresh'")).toBe(1);
      const dup = await h.as().post('/api/app/v1/apps', { app: 'fresh' });
      expect(dup.status).toBe(409);
      expect(dup.body.code).toBe(40900);
      expect((await h.as().post('/api/app/v1/apps', { app: 'bad app' })).status).toBe(400);
      expect((await h.as().post('/api/app/v1/apps', { app: 'ok', extra: 1 })).status).toBe(400);
    });

    it('answers 404 for tokens and secrets of an unknown app', async () => {
      expect((await h.as().post('/api/app/v1/tokens', { app: 'nosuch' })).status).toBe(404);
      expect((await h.as().post('/api/app/v1/secret', { app: 'nosuch' })).status).toBe(404);
      expect((await h.as().delete('/api/app/v1/tokens', { app: 'nosuch', tokenId: 1 })).status).toBe(404);
      expect(await h.count("SELECT COUNT(*) AS n FROM apps WHERE app = 'nosuch'")).toBe(0);
    });
  });
});
