import { Receiver, Stack, mapLimit, metricBy, nextSecond, percentiles, pollUntil, scrapeMetrics, sleepUntil } from '../support';

// Fair delivery over the built roles (issue 15, item 2; docs/behaviour.md, "Fair delivery"): one
// executor with 20 slots; app A's 30 every-second timers call an endpoint that answers after 4 s, so A
// alone would want ~120 slots; app B's 5 every-second timers call a fast one. Without the apps' shares
// A's fires fill every slot and B's wait behind them for seconds (a slot frees every ~130 ms, for the
// oldest fire first). With them A holds at most half the slots while B has fires waiting, A's fires
// over its share are handed back to the broker (app_share deferrals), and B's are delivered on time.
// `npm run bench:fairness` measures the same at the scale (500 + 100 timers, 1,000 slots).
jest.setTimeout(120_000);

const SLOTS = 20;
const FIRES = 15;
const SLOW_MS = 4_000;
const A_TIMERS = 30;
const B_TIMERS = 5;

let stack: Stack;
let slow: Receiver;
let fast: Receiver;

beforeAll(async () => {
  [slow, fast] = await Promise.all([Receiver.start(), Receiver.start()]);
  slow.respond(() => ({ delayMs: SLOW_MS }));
  stack = await Stack.start({ env: { TIMER_WINDOW_MINUTES: '5', TIMER_EXECUTOR_CONCURRENCY: String(SLOTS) } });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await slow?.close();
  await fast?.close();
});

it("keeps a fast app's fires on time while a slow app's callbacks would hold every slot", async () => {
  const start = nextSecond(8_000);
  const timer = (app: string, i: number, url: string) => ({
    app,
    name: `t-${i}`,
    every: '1s',
    startAt: new Date(start).toISOString(),
    maxFires: FIRES,
    notifyHTTPParam: { url, method: 'POST' },
  });
  const specs = [
    ...Array.from({ length: A_TIMERS }, (_, i) => timer('e2e-fair-a', i, slow.url('/slow'))),
    ...Array.from({ length: B_TIMERS }, (_, i) => timer('e2e-fair-b', i, fast.url('/fast'))),
  ];
  const ids = await mapLimit(specs, 4, (t) => stack.api.createEnabled(t));
  expect(Date.now()).toBeLessThan(start); // every timer enabled before its first fire
  const bIds = new Set(ids.slice(A_TIMERS));

  // Every fire of B arrives, once each (without the shares, 45 s were not enough for B's 75 fires).
  const ofB = () => fast.deliveries.filter((d) => bIds.has(d.timerId));
  await pollUntil(() => ofB().length >= B_TIMERS * FIRES || undefined, FIRES * 1_000 + 30_000);
  const b = ofB();
  expect(new Set(b.map((d) => d.fireId)).size).toBe(B_TIMERS * FIRES);

  // On time: without shares each of B's fires would wait seconds for one of the 20 slots A holds.
  const late = percentiles(b.map((d) => d.receivedAt - d.scheduledAt));
  console.log(`fast app's lateness beside the slow app, ms: ${JSON.stringify(late)}`);
  expect(late.p99).toBeLessThan(1_000);

  // A was held to its share: its fires beyond it were handed back, and A still gets delivered.
  await sleepUntil(start + FIRES * 1_000);
  expect(slow.deliveries.length).toBeGreaterThan(0);
  const deferred = metricBy((await scrapeMetrics(stack.port('executor')))!, 'timer_delivery_deferred_total', 'reason');
  expect(deferred.app_share).toBeGreaterThan(0);
});
