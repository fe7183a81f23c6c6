import { OverviewRepository } from '@timer/dal';
import { ApiHarness } from './api-harness';

// GET /api/app/v1/overview against real MariaDB, Redis and Pulsar, with a fixed clock: task rows
// written by hand, so every count and percentile is known.
jest.setTimeout(90_000);

type Bucket = { start: number; end: number; fires: number; firesPerSecond: number; delivered: number; failed: number; missed: number; open: number; latenessP50Ms: number | null; latenessP99Ms: number | null };

describe('api overview (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness();
  const MIN = 60_000;
  const H = 3_600_000;
  let NOW: number;
  let T: number;
  let appToken: string;

  /** Rows as (app, timer, runAt, status, lateness). */
  async function insert(rows: [string, number, number, number, number | null][]): Promise<void> {
    await h.db.query(
      `INSERT INTO tasks (app, timer_id, run_at, status, attempt, lateness_ms) VALUES ${rows.map(() => '(?, ?, ?, ?, 1, ?)').join(', ')}`,
      rows.flat(),
    );
  }

  beforeAll(async () => {
    await h.start();
    NOW = h.clock.now(); // a whole hour
    T = NOW - H;
    await insert([
      // minute 0: four delivered (lateness 10..40), one failed, one missed
      ...[10, 20, 30, 40].map((l, i): [string, number, number, number, number] => ['ov', 1, T + i * 1000, 2, l]),
      ['ov', 1, T + 5000, 3, 7000],
      ['ov', 1, T + 6000, 4, 90_000],
      // minute 5: a hundred delivered, lateness 1..100 ms
      ...Array.from({ length: 100 }, (_, i): [string, number, number, number, number] => ['ov', 2, T + 5 * MIN + i * 100, 2, i + 1]),
      // minute 59: two pending past their time (backlog) and one in flight
      ['ov', 3, NOW - 20_000, 0, null],
      ['ov', 3, NOW - 10_000, 0, null],
      ['ov', 3, NOW - 5_000, 1, null],
      // outside [T, NOW): one before (a pending one, two hours ago: backlog all the same) and one at NOW
      ['ov', 4, T - 1, 2, 5000],
      ['ov', 4, T - 2 * H, 0, null],
      ['ov', 4, NOW, 0, null],
      // another app: three slow deliveries in minute 0 and one fire pending past its time
      ['other', 5, T + 100, 2, 1000],
      ['other', 5, T + 200, 2, 1000],
      ['other', 5, T + 300, 2, 1000],
      ['other', 5, NOW - 1000, 0, null],
    ]);
    expect((await h.as().post('/api/app/v1/apps', { app: 'ov' })).status).toBe(200);
    appToken = (await h.as().post('/api/app/v1/tokens', { app: 'ov' })).body.data.token as string;
  });
  afterAll(() => h.stop());

  it("counts an app's fires per minute by outcome with exact lateness percentiles, the totals and the backlog", async () => {
    const res = await h.as().get(`/api/app/v1/overview?app=ov&from=${T}&to=${NOW}&bucketMs=${MIN}`);
    expect(res.status).toBe(200);
    const d = res.body.data as { app: string; from: number; to: number; bucketMs: number; now: number; buckets: Bucket[]; totals: Record<string, unknown>; backlog: Record<string, unknown> };
    expect(d).toMatchObject({ app: 'ov', from: T, to: NOW, bucketMs: MIN, now: NOW });
    expect(d.buckets).toHaveLength(60);
    expect(d.buckets.map((b) => b.start)).toEqual(Array.from({ length: 60 }, (_, i) => T + i * MIN));
    expect(d.buckets[0]).toEqual({ start: T, end: T + MIN, fires: 6, firesPerSecond: 0.1, delivered: 4, failed: 1, missed: 1, open: 0, latenessP50Ms: 20, latenessP99Ms: 40 });
    expect(d.buckets[5]).toEqual({ start: T + 5 * MIN, end: T + 6 * MIN, fires: 100, firesPerSecond: 1.667, delivered: 100, failed: 0, missed: 0, open: 0, latenessP50Ms: 50, latenessP99Ms: 99 });
    expect(d.buckets[59]).toMatchObject({ fires: 3, delivered: 0, open: 3, latenessP50Ms: null, latenessP99Ms: null });
    expect(d.buckets[1]).toEqual({ start: T + MIN, end: T + 2 * MIN, fires: 0, firesPerSecond: 0, delivered: 0, failed: 0, missed: 0, open: 0, latenessP50Ms: null, latenessP99Ms: null });
    // 104 delivered: 1..100 and 10, 20, 30, 40; nearest rank 52 is 48, rank 103 is 99.
    expect(d.totals).toEqual({ fires: 109, firesPerSecond: 0.03, delivered: 104, failed: 1, missed: 1, open: 3, latenessP50Ms: 48, latenessP99Ms: 99, latenessFires: 104, latenessCapped: false });
    expect(d.backlog).toEqual({ pending: 3, capped: false, oldestRunAt: T - 2 * H });
  });

  it('takes the percentiles over the latest delivered fires only when the range holds more than the limit', async () => {
    const r = await h.app.get(OverviewRepository).fires({ app: 'ov', fromMs: T, toMs: NOW, bucketMs: MIN, latenessLimit: 4 });
    // The latest four delivered: minute 5's last, lateness 97..100; minute 0's are left out.
    expect(r).toMatchObject({ latenessP50Ms: 98, latenessP99Ms: 100, latenessFires: 4, latenessCapped: true });
    expect(r.buckets.find((b) => b.start === T)).toMatchObject({ delivered: 4, latenessP50Ms: null });
    expect(r.buckets.find((b) => b.start === T + 5 * MIN)).toMatchObject({ delivered: 100, latenessP50Ms: 98, latenessP99Ms: 100 });
  });

  it('answers all apps to the admin without app, and its own app to an app token', async () => {
    const all = (await h.as().get(`/api/app/v1/overview?from=${T}&to=${NOW}`)).body.data;
    expect(all.app).toBeNull();
    // Minute 0 with the other app's three 1000 ms deliveries: 10, 20, 30, 40, 1000 x3.
    expect(all.buckets[0]).toMatchObject({ fires: 9, delivered: 7, latenessP50Ms: 40, latenessP99Ms: 1000 });
    expect(all.totals).toMatchObject({ fires: 113, delivered: 107, open: 4 });
    expect(all.backlog).toEqual({ pending: 4, capped: false, oldestRunAt: T - 2 * H });

    const own = await h.as(appToken).get(`/api/app/v1/overview?from=${T}&to=${NOW}`);
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({ app: 'ov', totals: { fires: 109 }, backlog: { pending: 3 } });
    const other = await h.as(appToken).get('/api/app/v1/overview?app=other');
    expect(other.status).toBe(403);
  });

  it('defaults to the last hour in minutes, rounds from down to a bucket and ends the last bucket at to', async () => {
    const def = (await h.as().get('/api/app/v1/overview?app=ov')).body.data;
    expect(def).toMatchObject({ from: T, to: NOW, bucketMs: MIN });
    expect(def.buckets).toHaveLength(60);
    const part = (await h.as().get(`/api/app/v1/overview?app=ov&from=${T + 30_000}&to=${T + 90_000}`)).body.data;
    expect(part.from).toBe(T);
    expect(part.buckets.map((b: Bucket) => [b.start, b.end])).toEqual([
      [T, T + MIN],
      [T + MIN, T + 90_000],
    ]);
  });

  it('answers 400 naming the field for a bad query', async () => {
    for (const [q, field] of [
      ['bucketMs=999', 'bucketMs'],
      ['bucketMs=3600001', 'bucketMs'],
      ['bucketMs=x', 'bucketMs'],
      [`bucketMs=1000&from=${NOW - 2 * H}&to=${NOW}`, 'bucketMs'],
      ['from=-1', 'from'],
      ['to=1.5', 'to'],
      [`from=${NOW}&to=${NOW - 1}`, 'from must be before to'],
      [`from=${NOW - 25 * H}&to=${NOW}`, '24 hours'],
      ['app=%20bad%20', 'app'],
      ['fuzz=1', 'fuzz'],
    ] as const) {
      const res = await h.as().get(`/api/app/v1/overview?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      expect(res.body.msg).toContain(field);
    }
  });

  it('stays cheap with 100,000 delivered fires in the range (exact percentiles, time printed)', async () => {
    const B = NOW - 24 * H;
    // Lateness seq % 1000: each of 0..999 a hundred times.
    await h.db.query(
      "INSERT INTO tasks (app, timer_id, run_at, status, attempt, lateness_ms) SELECT 'big', 100 + seq % 500, ? + (seq - 1) * 36, 2, 1, seq % 1000 FROM seq_1_to_100000",
      [B],
    );
    const timed = async (path: string) => {
      const t0 = performance.now();
      const res = await h.as().get(path);
      return { res, ms: Math.round(performance.now() - t0) };
    };
    await timed(`/api/app/v1/overview?app=big&from=${B}&to=${B + H}`); // warm the buffer pool once
    const app = await timed(`/api/app/v1/overview?app=big&from=${B}&to=${B + H}`);
    const all = await timed(`/api/app/v1/overview?from=${B}&to=${B + H}`);
    const seconds = await timed(`/api/app/v1/overview?app=big&from=${B}&to=${B + H}&bucketMs=1000`);
    for (const { res } of [app, all]) {
      expect(res.status).toBe(200);
      expect(res.body.data.totals).toEqual({ fires: 100_000, firesPerSecond: 27.778, delivered: 100_000, failed: 0, missed: 0, open: 0, latenessP50Ms: 499, latenessP99Ms: 989, latenessFires: 100_000, latenessCapped: false });
      expect(res.body.data.buckets).toHaveLength(60);
    }
    expect(seconds.res.body.data.buckets).toHaveLength(3600);
    process.stdout.write(`overview over 100,000 delivered fires in one hour: app ${app.ms} ms, all apps ${all.ms} ms, 3600 one-second buckets ${seconds.ms} ms\n`);
    expect(Math.max(app.ms, all.ms, seconds.ms)).toBeLessThan(5_000);
  });
});
