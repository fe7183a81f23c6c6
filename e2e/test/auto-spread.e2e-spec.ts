import { answerOf, nextSecond, pollUntil, Receiver, Stack } from '../support';

// Admission with autoSpread over the built roles: with a capacity of 2 fires/s, two timers fill the
// seconds 0, 5, 10, ...; the same schedule with a jitterMs is refused (429 with the numbers, nothing
// written), and with autoSpread admitted at the least-loaded offset (+1 s), its fires delivered at
// their scheduled time plus that offset and counted there by the projected load.
jest.setTimeout(60_000);

const APP = 'e2e-spread';
const FIVES = '*/5 * * * * *';
const JITTER_MS = 3_000;
let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start({ env: { TIMER_WINDOW_MINUTES: '5', TIMER_CAPACITY_FIRES_PER_SEC: '2' } });
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const written = async () => {
  const [t] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM timers');
  const [f] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM tasks');
  return { timers: Number(t.n), fires: Number(f.n) };
};

it('refuses a timer that would overload a second, admits it with autoSpread at the least-loaded offset and delivers its fires there', async () => {
  const hook = (path: string) => ({ url: receiver.url(path), method: 'POST' });
  for (const name of ['fill-1', 'fill-2']) await stack.api.createEnabled({ app: APP, name, cron: FIVES, notifyHTTPParam: hook('/fill') });

  const before = await written();
  const plain = (await answerOf(stack.api.createTimer({ app: APP, name: 'plain', cron: FIVES, jitterMs: JITTER_MS, notifyHTTPParam: hook('/plain') }))) as {
    status: number;
    body: { code: number; msg: string };
  };
  expect(plain).toMatchObject({ status: 429, body: { code: 42903 } });
  expect(plain.body.msg).toMatch(/^admission: the second \S+Z would have 3 fires \(2 scheduled \+ 1 of this timer\), over the capacity of 2 fires\/s/);
  expect(await written()).toEqual(before);

  const spread = await stack.api.createEnabled({ app: APP, name: 'spread', cron: FIVES, jitterMs: JITTER_MS, autoSpread: true, notifyHTTPParam: hook('/spread') });
  expect(await stack.api.getTimer(APP, spread)).toMatchObject({ autoSpread: true, jitterMs: JITTER_MS, spreadOffsetMs: 1_000 });
  const from = Math.ceil((Date.now() + 10_000) / 5_000) * 5_000;
  const load = await stack.api.call<{ data: { perSecond: number[] } }>('GET', `/api/app/v1/load?app=${APP}&from=${from}&to=${from + 5_000}`);
  expect(load.data.perSecond).toEqual([2, 1, 0, 0, 0]);

  // Three of its fires, each delivered at its scheduled time plus the offset.
  const start = nextSecond();
  await pollUntil(() => receiver.forTimer(spread).filter((d) => d.scheduledAt >= start).length >= 3 || undefined, 20_000);
  const ds = receiver.forTimer(spread).filter((d) => d.scheduledAt >= start);
  expect(ds.length).toBeGreaterThanOrEqual(3);
  for (const d of ds) {
    expect(d.scheduledAt % 5_000).toBe(0);
    expect(d.jitteredAt).toBe(d.scheduledAt + 1_000);
    expect(d.receivedAt).toBeGreaterThanOrEqual(d.jitteredAt - 20);
    expect(d.receivedAt).toBeLessThan(d.jitteredAt + 1_500);
  }
  // The fillers were not moved: delivered on their seconds.
  const fills = receiver.deliveries.filter((d) => d.path === '/fill' && d.scheduledAt >= start && d.scheduledAt <= ds[ds.length - 1].scheduledAt);
  expect(fills.length).toBeGreaterThanOrEqual(2 * ds.length);
  expect(fills.every((d) => d.jitteredAt === d.scheduledAt && d.receivedAt >= d.scheduledAt - 20)).toBe(true);
});
