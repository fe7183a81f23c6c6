import { ApiHarness } from './api-harness';

// Fire records and the per-timer callback timeout through the api module (real MariaDB, Redis,
// Pulsar; fixed clock). Outcomes and attempts are written here as the executor writes them.
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';
const Y = new Date().getUTCFullYear() + 1;
const at = (s: string) => Date.parse(`${Y}-${s}`);
const NOW = at('06-01T10:00:00Z');

interface Row {
  fireId: string;
  runAt: number;
  status: number;
  attempts: { attempt: number; startedAt: number; httpStatus: number | null; costMs: number | null; error: string | null }[];
}

describe('records and notifyHTTPParam.timeoutMs (api, real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness({ TIMER_CALLBACK_TIMEOUT_MAX_MS: '20000' });
  let id: number;
  let gone: number;
  beforeAll(async () => {
    await h.start();
    h.clock.set(NOW);
    const create = async (name: string) => (await h.as().post('/api/timer/v1/def', { app: 'rec', name, cron: '0 * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' } })).body.id as number;
    id = await create('kept');
    gone = await create('gone');
    // Fires of two timers: 3 and 2 minutes ago (settled), 1 minute ago (pending, overdue), 1 minute ahead (pending).
    const rows = [id, gone].flatMap((t) => [-3, -2, -1, 1].map((m) => [t, NOW + m * 60_000]));
    await h.db.query(`INSERT INTO tasks (app, timer_id, run_at) VALUES ${rows.map(() => "('rec', ?, ?)").join(', ')}`, rows.flat());
    const attempts = JSON.stringify([
      { attempt: 1, startedAt: NOW - 180_000 + 4, httpStatus: null, costMs: 1_000, error: 'no answer within 1000 ms' },
      { attempt: 2, startedAt: NOW - 178_000, httpStatus: 500, costMs: 8, error: 'HTTP 500' },
    ]);
    await h.db.query('UPDATE tasks SET status = 3, attempt = 2, http_status = 500, attempts = ? WHERE run_at = ?', [attempts, NOW - 180_000]);
    await h.db.query('UPDATE tasks SET status = 2, attempt = 1 WHERE run_at = ?', [NOW - 120_000]);
    await h.as().delete('/api/timer/v1/def', { id: gone, app: 'rec' });
  });
  afterAll(() => h.stop());

  const records = async (q: string) => {
    const res = await h.as().get(`/api/task/v1/records?app=rec${q}`);
    return { status: res.status, body: res.body as { code: number; msg: string; data: Row[]; total: number } };
  };
  const minutes = (rows: Row[]) => rows.map((r) => `${r.fireId.split('-')[0] === String(id) ? 'k' : 'g'}${(r.runAt - NOW) / 60_000}`);

  it("lists a timer's past fires latest first with their attempts; future pending ones only with includePending=true", async () => {
    const past = await records(`&timerID=${id}`);
    expect(past.status).toBe(200);
    expect(minutes(past.body.data)).toEqual(['k-1', 'k-2', 'k-3']);
    expect(past.body.data[2]).toMatchObject({ status: 3, attempts: [{ attempt: 1, httpStatus: null, error: 'no answer within 1000 ms' }, { attempt: 2, httpStatus: 500 }] });
    expect(past.body.data[0].attempts).toEqual([]);
    expect(minutes((await records(`&timerID=${id}&includePending=true`)).body.data)).toEqual(['k1', 'k-1', 'k-2', 'k-3']);
  });

  it('keeps the records of a deleted timer readable by timer id and by fire id', async () => {
    // Its pending fires went with the delete; the settled ones stay.
    expect(minutes((await records(`&timerID=${gone}&includePending=true`)).body.data)).toEqual(['g-2', 'g-3']);
    const one = await records(`&fireID=${gone}-${NOW - 180_000}`);
    expect(one.body).toMatchObject({ code: 0, total: 1, data: [{ fireId: `${gone}-${NOW - 180_000}`, status: 3 }] });
    expect(one.body.data[0].attempts).toHaveLength(2);
  });

  it('answers a first success stored without its attempts JSON (started_at) with the same JSON as one stored with it', async () => {
    const runAt = NOW - 120_000;
    const entry = { attempt: 1, startedAt: runAt + 41, httpStatus: 200, costMs: 5, error: null };
    await h.db.query('UPDATE tasks SET http_status = 200, cost_ms = 5, started_at = ? WHERE timer_id = ? AND run_at = ?', [runAt + 41, id, runAt]);
    await h.db.query('UPDATE tasks SET http_status = 200, cost_ms = 5, attempts = ? WHERE timer_id = ? AND run_at = ?', [JSON.stringify([entry]), gone, runAt]);
    const [fixed, stored] = await Promise.all([records(`&fireID=${id}-${runAt}`), records(`&fireID=${gone}-${runAt}`)]);
    expect(fixed.body.data[0].attempts).toEqual([{ ...entry, response: null }]);
    expect(JSON.stringify(fixed.body.data[0].attempts)).toBe(JSON.stringify(stored.body.data[0].attempts));
  });

  it("shows each attempt's kept answer as the executor stored it", async () => {
    const runAt = NOW - 60_000;
    const response = { status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad gateway</h1>', truncated: true };
    const entry = { attempt: 1, startedAt: runAt + 3, httpStatus: 502, costMs: 9, error: 'HTTP 502', response };
    await h.db.query('UPDATE tasks SET attempts = ? WHERE timer_id = ? AND run_at = ?', [JSON.stringify([entry]), id, runAt]);
    expect((await records(`&fireID=${id}-${runAt}`)).body.data[0].attempts).toEqual([entry]);
  });

  it('queries the whole app by status and time range (epoch ms or ISO with an offset), paged', async () => {
    expect(minutes((await records('&status=3')).body.data).sort()).toEqual(['g-3', 'k-3']);
    const to = encodeURIComponent(new Date(NOW - 60_000).toISOString().replace('Z', '+00:00'));
    const range = await records(`&from=${NOW - 150_000}&to=${to}&pageSize=1&pageIndex=2`);
    expect(range.body.total).toBe(2);
    expect(minutes(range.body.data)).toEqual(['k-2']);
    expect(minutes((await records(`&from=${NOW - 150_000}&pageSize=10`)).body.data)).toEqual(['k-1', 'g-2', 'k-2']);
  });

  it('shows a fire asked for by id whatever its state; 404 for a fire or timer that is not the app\'s', async () => {
    expect((await records(`&fireID=${id}-${NOW + 60_000}`)).body).toMatchObject({ total: 1, data: [{ status: 0 }] });
    expect((await records(`&fireID=${id}-${NOW + 1}`)).status).toBe(404);
    expect((await records(`&fireID=999999-${NOW}`)).status).toBe(404);
    expect((await h.as().get(`/api/task/v1/records?app=other&timerID=${id}`)).status).toBe(404);
    expect((await h.as().get(`/api/task/v1/records?app=other&fireID=${id}-${NOW - 60_000}`)).status).toBe(404);
    expect((await h.as().get('/api/task/v1/records?app=other')).body).toMatchObject({ code: 0, total: 0, data: [] });
  });

  it.each([
    [`&from=${NOW}&to=${NOW}`, 'to must be after from'],
    [`&from=2020-01-01T00:00:00Z&to=2019-01-01T00:00:00Z`, 'to must be after from'],
    ['&to=soon', 'to must be epoch milliseconds or an ISO 8601 date-time with Z or an offset'],
    ['&fireID=abc', 'fireID must be a fire id: <timerId>-<runAtMs> (as in X-Timer-Fire-Id)'],
    [`&timerID=1&fireID=2-${NOW}`, `fireID 2-${NOW} is not a fire of timerID 1`],
    ['&includePending=1', 'includePending must be true or false'],
  ])('answers %s with 400 naming the field', async (q, message) => {
    const res = await records(q);
    expect(res.status).toBe(400);
    expect(String(res.body.msg)).toContain(message);
  });

  describe('notifyHTTPParam.timeoutMs', () => {
    const body = (timeoutMs: unknown) => ({ app: 'rec', name: `to-${String(timeoutMs)}`, cron: '0 * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST', timeoutMs } });

    it('is stored, shown by GET, patched, and removed by null (the global timeout again)', async () => {
      const created = await h.as().post('/api/timer/v1/def', body(1_000));
      expect(created.status).toBe(200);
      const get = async () => (await h.as().get(`/api/timer/v1/def?id=${created.body.id}&app=rec`)).body.data;
      const first = await get();
      expect(first.notifyHTTPParam).toEqual({ url: HOOK, method: 'POST', timeoutMs: 1_000 });
      const patch = (timeoutMs: unknown, version: number) => h.as().patch('/api/timer/v1/def', { id: created.body.id, app: 'rec', version, notifyHTTPParam: { timeoutMs } });
      expect((await patch(20_000, first.version)).status).toBe(200);
      const second = await get();
      expect(second.notifyHTTPParam.timeoutMs).toBe(20_000);
      expect((await patch(null, second.version)).status).toBe(200);
      expect((await get()).notifyHTTPParam).toEqual({ url: HOOK, method: 'POST' });
    });

    it.each([
      [999, 'notifyHTTPParam.timeoutMs must be an integer number of milliseconds from 1000 to TIMER_CALLBACK_TIMEOUT_MAX_MS'],
      ['5000', 'notifyHTTPParam.timeoutMs must be an integer number of milliseconds from 1000 to TIMER_CALLBACK_TIMEOUT_MAX_MS'],
      [20_001, 'notifyHTTPParam.timeoutMs must be from 1000 to 20000 ms (TIMER_CALLBACK_TIMEOUT_MAX_MS); got 20001'],
    ])('refuses %j with 400 naming the field and the bounds, writing nothing', async (timeoutMs, message) => {
      const before = await h.count('SELECT COUNT(*) AS n FROM timers');
      const res = await h.as().post('/api/timer/v1/def', body(timeoutMs));
      expect(res.status).toBe(400);
      expect(String(res.body.msg)).toContain(message);
      expect(await h.count('SELECT COUNT(*) AS n FROM timers')).toBe(before);
    });
  });
});
