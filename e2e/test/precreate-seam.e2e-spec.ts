import { accountFires, percentiles, periodicFireIds, Receiver, sleep, Stack } from '../support';

// The seam between the fires an enable writes (the near future, TIMER_PRECREATE_SECONDS) and those
// the migrator's top-up writes after them: with the migrator down when the timers are enabled (its
// restart tops them up from their next_fire_at) and one-minute windows (every minute a window
// boundary, where the window expansion takes over from the top-up), every fire of every-second
// timers goes out once, none lost, none doubled, none recorded missed.
jest.setTimeout(300_000);

const APP = 'e2e-seam';
const TIMERS = 10;
const PRECREATE_S = 15;
/** How long fires are watched from the enable on: two window boundaries at least. */
const WATCH_MS = 130_000;

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await Receiver.start();
  // Pacing stretches a tick by at most 5 s, well inside the 15 s written ahead (docs/configuration.md).
  stack = await Stack.start({ env: { TIMER_WINDOW_MINUTES: '1', TIMER_PRECREATE_SECONDS: String(PRECREATE_S), TIMER_MIGRATOR_TICK_MS: '2000', TIMER_MIGRATOR_PACE_MAX_MS: '5000' } });
  await stack.api.call('POST', '/api/app/v1/apps', { app: APP });
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

it('loses and doubles no fire where the migrator takes over from an enable, across its restart and window boundaries', async () => {
  await stack.kill('migrator');
  const timers = Array.from({ length: TIMERS }, (_, i) => ({ name: `seam-${i}`, cron: '* * * * * *', notifyHTTPParam: { url: receiver.url('/seam'), method: 'POST' } }));
  const res = await fetch(`${stack.api.baseUrl}/api/timer/v1/def/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ app: APP, enable: true, timers }) });
  const enabledAt = Date.now();
  expect(res.status).toBe(200);
  const ids = ((await res.json()) as { data: { timers: { id: number }[] } }).data.timers.map((t) => String(t.id));
  // Only the near future exists while the migrator is down.
  const [{ last }] = await stack.sql<{ last: string }>(`SELECT MAX(run_at) AS last FROM tasks WHERE timer_id IN (${ids.map(() => '?').join(',')})`, ids);
  expect(Number(last)).toBeLessThan(enabledAt + PRECREATE_S * 1000);

  await sleep(4_000); // down for a part of the near future: its restart must top up before the rest comes due
  await stack.restart('migrator');
  const until = enabledAt + WATCH_MS;
  await sleep(until - Date.now() + 3_000);

  const firsts = await stack.sql<{ timer_id: string; first: string }>(`SELECT timer_id, MIN(run_at) AS first FROM tasks WHERE timer_id IN (${ids.map(() => '?').join(',')}) GROUP BY timer_id`, ids);
  const expected = firsts.flatMap((r) => periodicFireIds(String(r.timer_id), Number(r.first), until));
  const account = accountFires(receiver.deliveries, expected, ids);
  const missed = await stack.sql<{ n: number }>(`SELECT COUNT(*) AS n FROM tasks WHERE status = 4 AND timer_id IN (${ids.map(() => '?').join(',')})`, ids);
  const p = percentiles(account.lateness);
  console.log(`seam: ${account.expected} fires expected, ${account.delivered} delivered, ${account.missing.length} missing, ${account.duplicates.length} doubled; lateness ms p50 ${p.p50} p99 ${p.p99} max ${p.max}`);
  expect(account.expected).toBeGreaterThan(TIMERS * (WATCH_MS / 1000 - 5));
  expect(account.missing.slice(0, 10)).toEqual([]);
  expect(account.duplicates).toEqual([]);
  expect(Number(missed[0].n)).toBe(0);
});
