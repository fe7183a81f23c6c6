import { percentiles, Receiver, scrapeMetrics, sleep, Stack } from '../support';

// Many new every-second timers at once must leave every fire on time: four batch create+enable
// requests of 50 every-second timers, one after another, on an otherwise idle stack. Each request
// writes the near future of its timers; the migrator's top-up writes the rest of the prepared windows
// (an hour here) in the background meanwhile. Every fire from each timer's first one on is delivered,
// at most about a second after the later of its time and its request's answer, and none is recorded
// "timer not found".
jest.setTimeout(300_000);

const APP = 'e2e-every-second';
const BATCHES = 4;
const PER_BATCH = 50;
/** How long fires are watched after the last request answered. */
const WATCH_MS = 45_000;
/** "About a second": the allowance over the later of a fire's time and its request's answer. */
const MAX_LATE_MS = 1_500;

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await Receiver.start();
  // 20-minute windows: enable before the near-future cut wrote an hour of rows per timer (720,000 here).
  stack = await Stack.start({ env: { TIMER_WINDOW_MINUTES: '20', TIMER_API_BATCH_MAX: String(PER_BATCH) } });
  await stack.api.call('POST', '/api/app/v1/apps', { app: APP });
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

it('delivers every fire of four batches of 50 every-second timers on time, none recorded "timer not found"', async () => {
  const answeredAt = new Map<string, number>();
  const requestMs: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const timers = Array.from({ length: PER_BATCH }, (_, i) => ({ name: `s-${b}-${i}`, cron: '* * * * * *', notifyHTTPParam: { url: receiver.url('/s'), method: 'POST' } }));
    const sent = Date.now();
    const res = await fetch(`${stack.api.baseUrl}/api/timer/v1/def/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ app: APP, enable: true, timers }) });
    const at = Date.now();
    expect(res.status).toBe(200);
    requestMs.push(at - sent);
    const { data } = (await res.json()) as { data: { timers: { id: number }[] } };
    for (const t of data.timers) answeredAt.set(String(t.id), at);
  }
  const until = Date.now() + WATCH_MS;
  await sleep(WATCH_MS + 3_000);

  const ids = [...answeredAt.keys()];
  const first = new Map(
    (await stack.sql<{ timer_id: string; first: string }>(`SELECT timer_id, MIN(run_at) AS first FROM tasks WHERE timer_id IN (${ids.map(() => '?').join(',')}) GROUP BY timer_id`, ids)).map((r) => [
      String(r.timer_id),
      Number(r.first),
    ]),
  );
  const received = new Map<string, number>();
  for (const d of receiver.deliveries) if (!received.has(d.fireId)) received.set(d.fireId, d.receivedAt);

  const missing: string[] = [];
  const late: number[] = [];
  for (const id of ids) {
    const from = first.get(id);
    expect(from).toBeDefined();
    for (let t = from!; t < until; t += 1_000) {
      const got = received.get(`${id}-${t}`);
      if (got === undefined) missing.push(`${id}-${t}`);
      else late.push(got - Math.max(t, answeredAt.get(id)!));
    }
  }
  const notFound = await stack.sql<{ n: number }>(`SELECT COUNT(*) AS n FROM tasks WHERE error LIKE '%not found%'`);
  const metric = (await scrapeMetrics(stack.port('executor')))?.filter((m) => m.name === 'timer_missed_fires_total' && m.labels.reason === 'timer_not_found');
  const p = percentiles(late);
  console.log(
    `batch requests (ms): ${requestMs.join(', ')}; fires checked ${late.length + missing.length}, missing ${missing.length}; ` +
      `lateness ms p50 ${p.p50} p99 ${p.p99} max ${p.max}; over ${MAX_LATE_MS} ms: ${late.filter((l) => l > MAX_LATE_MS).length}`,
  );
  expect(late.length).toBeGreaterThan(BATCHES * PER_BATCH * 40);
  expect(missing.slice(0, 10)).toEqual([]);
  expect(Number(notFound[0].n)).toBe(0);
  expect((metric ?? []).reduce((n, m) => n + m.value, 0)).toBe(0);
  expect(late.filter((l) => l > MAX_LATE_MS).length).toBe(0);
});
