import { ApiHarness } from './api-harness';

// GET /api/app/v1/accounting against real MariaDB, Redis and Pulsar, with a fixed clock.
jest.setTimeout(60_000);

describe('api accounting (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness({ TIMER_WINDOW_MINUTES: '60' });
  const H = 3_600_000;
  let W0: number;

  beforeAll(async () => {
    await h.start();
    W0 = h.clock.now(); // a whole hour
    const created = await h.as().post('/api/timer/v1/def', { app: 'ledger', name: 'every-20-min', cron: '0 */20 * * * *', notifyHTTPParam: { url: 'https://hooks.example.com/x', method: 'POST' } });
    const id = created.body.id as number;
    expect((await h.as().post('/api/timer/v1/enable', { id, app: 'ledger' })).body.code).toBe(0);
    // W0 + 0, 20, 40 min and the same in the next two hours; the first hour's fires settled three ways.
    await h.db.query('UPDATE tasks SET status = 2 WHERE timer_id = ? AND run_at = ?', [id, W0]);
    await h.db.query('UPDATE tasks SET status = 3 WHERE timer_id = ? AND run_at = ?', [id, W0 + 20 * 60_000]);
    await h.db.query('UPDATE tasks SET status = 4 WHERE timer_id = ? AND run_at = ?', [id, W0 + 40 * 60_000]);
    h.clock.set(W0 + H + 5 * 60_000);
  });
  afterAll(() => h.stop());

  it('tells per window how many fires exist and how many are settled, delivered, failed, missed or open', async () => {
    const res = await h.as().get(`/api/app/v1/accounting?app=ledger&from=${W0}&to=${W0 + 3 * H}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ code: 0, data: { app: 'ledger', windowMs: H, from: W0, to: W0 + 3 * H, unsettledFinished: 0 } });
    expect(res.body.data.windows).toEqual([
      { windowStart: W0, windowEnd: W0 + H, expected: 3, delivered: 1, failed: 1, missed: 1, settled: 3, open: 0, finished: true },
      { windowStart: W0 + H, windowEnd: W0 + 2 * H, expected: 3, delivered: 0, failed: 0, missed: 0, settled: 0, open: 3, finished: false },
      { windowStart: W0 + 2 * H, windowEnd: W0 + 3 * H, expected: 3, delivered: 0, failed: 0, missed: 0, settled: 0, open: 3, finished: false },
    ]);
    // Later, with the second window over and its fires still open, the response says so.
    h.clock.set(W0 + 2 * H + 1);
    const later = await h.as().get(`/api/app/v1/accounting?app=ledger&from=${W0}&to=${W0 + 3 * H}`);
    expect(later.body.data.unsettledFinished).toBe(3);
  });

  it('defaults to the last day up to the end of the current window', async () => {
    h.clock.set(W0 + H + 5 * 60_000);
    const res = await h.as().get('/api/app/v1/accounting?app=ledger');
    expect(res.body.data).toMatchObject({ from: W0 + 2 * H - 24 * H, to: W0 + 2 * H });
    expect(res.body.data.windows.map((w: { windowStart: number }) => w.windowStart)).toEqual([W0, W0 + H]);
  });

  it('answers 400 naming the field for a bad range, and 403 for another app', async () => {
    for (const [q, field] of [
      ['&from=x', 'from'],
      ['&to=-5', 'to'],
      [`&from=${W0 + H}&to=${W0}`, 'from must be before to'],
      [`&from=${W0}&to=${W0 + 40 * 24 * H}`, '31 days'],
      ['', 'app'],
    ] as const) {
      const res = await h.as().get(`/api/app/v1/accounting?${q === '' ? '' : 'app=ledger'}${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      expect(res.body.msg).toContain(field);
    }
    const app = await h.as().post('/api/app/v1/apps', { app: 'other' });
    expect(app.body.code).toBe(0);
    const token = await h.as().post('/api/app/v1/tokens', { app: 'other' });
    const forbidden = await h.as(token.body.data.token as string).get('/api/app/v1/accounting?app=ledger');
    expect(forbidden.status).toBe(403);
  });
});
