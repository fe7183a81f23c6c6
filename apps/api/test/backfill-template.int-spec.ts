import { ApiHarness } from './api-harness';

// Templated callbacks (the checks at write) and backfill through the api module (real MariaDB, Redis,
// Pulsar; fixed clock). Delivery of both is in e2e/test/backfill-template.e2e-spec.ts.
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';
const Y = new Date().getUTCFullYear() + 1;
const NOW = Date.parse(`${Y}-06-01T10:00:00Z`);
const DEF = '/api/timer/v1/def';
const BACKFILL = '/api/timer/v1/backfill';

describe('templated callbacks and backfill (api, real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness({ TIMER_BACKFILL_MAX_FIRES: '100' });
  beforeAll(async () => {
    await h.start();
    h.clock.set(NOW);
  });
  afterAll(() => h.stop());

  const timers = (app: string) => h.count('SELECT COUNT(*) AS n FROM timers WHERE app = ?', [app]);
  const create = async (app: string, extra: Record<string, unknown>) => {
    const res = await h.as().post(DEF, { app, name: `t${Math.random()}`, cron: '0 * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' }, ...extra });
    expect(res.status).toBe(200);
    return res.body.id as number;
  };

  describe('notifyHTTPParam.template', () => {
    it.each([
      ['body', { body: '{"at":{{scheduledAt}},"x":"{{nope}}"}' }, 'notifyHTTPParam.body: unknown placeholder {{nope}}'],
      ['url', { url: `${HOOK}?at={{scheduledAt` }, 'notifyHTTPParam.url: malformed placeholder'],
      ['header', { header: { 'X-Run': ['{{Attempt}}'] } }, 'notifyHTTPParam.header.X-Run: unknown placeholder {{Attempt}}'],
    ])('refuses an unknown or malformed placeholder in the %s at create, naming field and placeholder; nothing written', async (_, n, message) => {
      const res = await h.as().post(DEF, { app: 'tpl-bad', name: 'x', cron: '0 * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST', template: true, ...n } });
      expect(res.status).toBe(400);
      expect(res.body.msg).toContain(message);
      expect(await timers('tpl-bad')).toBe(0);
    });

    it('refuses template that is not a boolean', async () => {
      const res = await h.as().post(DEF, { app: 'tpl-bad', name: 'x', cron: '0 * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST', template: 'yes' } });
      expect(res.status).toBe(400);
      expect(res.body.msg).toContain('template');
    });

    it('keeps a body with braces verbatim without template; a PATCH turning template on checks it (PUT and PATCH as create)', async () => {
      const id = await create('tpl', { notifyHTTPParam: { url: HOOK, method: 'POST', body: '{{nope}}' } });
      const patch = await h.as().patch(DEF, { id, app: 'tpl', version: 1, notifyHTTPParam: { template: true } });
      expect(patch.status).toBe(400);
      expect(patch.body.msg).toContain('notifyHTTPParam.body: unknown placeholder {{nope}}');
      const get = await h.as().get(`${DEF}?id=${id}&app=tpl`);
      expect(get.body.data).toMatchObject({ version: 1, notifyHTTPParam: { body: '{{nope}}' } });
      expect(get.body.data.notifyHTTPParam).not.toHaveProperty('template');
    });

    it('stores and shows template in GET and in the versions; PATCH template false removes it', async () => {
      const body = '{"at":{{scheduledAt}},"prev":"{{previousScheduledAt}}","fire":"{{fireId}}"}';
      const id = await create('tpl', { notifyHTTPParam: { url: `${HOOK}/{{app}}?at={{scheduledAtIso}}`, method: 'POST', header: { 'X-Fire': '{{fireId}}' }, body, template: true } });
      const get = await h.as().get(`${DEF}?id=${id}&app=tpl`);
      expect(get.body.data.notifyHTTPParam).toEqual({ url: `${HOOK}/{{app}}?at={{scheduledAtIso}}`, method: 'POST', header: { 'X-Fire': ['{{fireId}}'] }, body, template: true });
      expect((await h.as().patch(DEF, { id, app: 'tpl', version: 1, notifyHTTPParam: { template: false } })).status).toBe(200);
      const versions = await h.as().get(`${DEF}/versions?id=${id}&app=tpl`);
      expect(versions.body.data.map((v: { notifyHTTPParam: { template?: boolean } }) => v.notifyHTTPParam.template ?? null)).toEqual([null, true]);
    });
  });

  describe('POST /api/timer/v1/backfill', () => {
    const backfillRows = (id: number) => h.count('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ? AND backfill = 1', [id]);
    let id: number;
    beforeAll(async () => {
      // Every second from a minute ago: its past seconds have no fires (the enable creates them from now on).
      id = await create('bf', { cron: undefined, every: '1s', startAt: NOW - 60_000 });
      expect((await h.as().post('/api/timer/v1/enable', { id, app: 'bf' })).status).toBe(200);
      // One past second that already had its fire (delivered).
      await h.db.query("INSERT INTO tasks (app, timer_id, run_at, status, attempt) VALUES ('bf', ?, ?, 2, 1)", [id, NOW - 30_000]);
    });

    it('creates the missing fires of [from, to), marked backfill, and reports the existing ones; a repeat creates none', async () => {
      const res = await h.as().post(BACKFILL, { id, app: 'bf', from: new Date(NOW - 60_000).toISOString(), to: NOW });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code: 0, msg: 'ok', data: { fires: 60, created: 59, existing: 1, published: 59 } });
      expect(await backfillRows(id)).toBe(59);
      expect(await h.count('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ? AND run_at >= ? AND run_at < ?', [id, NOW - 60_000, NOW])).toBe(60);
      const again = await h.as().post(BACKFILL, { id, app: 'bf', from: NOW - 60_000, to: NOW });
      expect(again.body.data).toEqual({ fires: 60, created: 0, existing: 60, published: 0 });

      const records = await h.as().get(`/api/task/v1/records?app=bf&timerID=${id}&from=${NOW - 60_000}&to=${NOW}&pageSize=100&includePending=true`);
      const marked = records.body.data.filter((r: { backfill: boolean }) => r.backfill);
      expect(records.body.total).toBe(60);
      expect(marked).toHaveLength(59);
      expect(records.body.data.find((r: { runAt: number }) => r.runAt === NOW - 30_000)).toMatchObject({ backfill: false, status: 2 });
    });

    it('stays within the schedule bounds: nothing before startAt', async () => {
      const res = await h.as().post(BACKFILL, { id, app: 'bf', from: NOW - 90_000, to: NOW - 59_000 });
      expect(res.body.data).toEqual({ fires: 1, created: 0, existing: 1, published: 0 });
    });

    it.each([
      ['from not an instant', { from: 'yesterday', to: NOW }, 400, 'from must be epoch milliseconds or an ISO 8601'],
      ['to missing', { from: NOW - 10_000 }, 400, 'to must be epoch milliseconds'],
      ['to in the future', { from: NOW - 10_000, to: NOW + 1 }, 400, 'is in the future'],
      ['to not after from', { from: NOW - 10_000, to: NOW - 10_000 }, 400, 'to must be after from'],
      ['more fires than TIMER_BACKFILL_MAX_FIRES', { from: NOW - 200_000, to: NOW }, 400, 'more than 100 fires (TIMER_BACKFILL_MAX_FIRES)'],
    ])('refuses %s, naming it, and writes nothing', async (_, range, status, message) => {
      const before = await h.count('SELECT COUNT(*) AS n FROM tasks');
      h.clock.set(NOW);
      // Widen the schedule's reach for the count check: a timer anchored long ago.
      const target = message.includes('MAX_FIRES') ? await create('bf', { cron: undefined, every: '1s', startAt: NOW - 3_600_000 }) : id;
      if (target !== id) await h.as().post('/api/timer/v1/enable', { id: target, app: 'bf' });
      const written = await h.count('SELECT COUNT(*) AS n FROM tasks');
      const res = await h.as().post(BACKFILL, { id: target, app: 'bf', ...range });
      expect(res.status).toBe(status);
      expect(res.body.msg).toContain(message);
      expect(await h.count('SELECT COUNT(*) AS n FROM tasks')).toBe(written);
      expect(written).toBeGreaterThanOrEqual(before);
    });

    it('answers 409 for a disabled timer and 404 for another app, writing nothing', async () => {
      const off = await create('bf', { cron: '0 * * * * *' });
      const res = await h.as().post(BACKFILL, { id: off, app: 'bf', from: NOW - 600_000, to: NOW });
      expect(res.status).toBe(409);
      expect(await backfillRows(off)).toBe(0);
      expect((await h.as().post(BACKFILL, { id, app: 'other', from: NOW - 10_000, to: NOW })).status).toBe(404);
    });
  });
});
