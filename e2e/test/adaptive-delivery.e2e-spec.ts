import { Receiver, Stack, TaskRecord, metricBy, nextSecond, pollUntil, scrapeMetrics, sleepUntil } from '../support';

// Adaptive per-destination delivery over the built roles (docs/behaviour.md, "Adaptive delivery"):
// 1. an origin answering 503 with Retry-After: 10 gets no call for 10 s, while fires to it keep
//    coming due; the fire that got the 503 and those due meanwhile are delivered after the 10 s, each
//    deferred attempt recorded with its reason (retry_after), none sent early;
// 2. an origin down (500) for 20 s: its circuit opens after 3 failures and it receives only a probe
//    every open period (5 s) instead of every fire's every attempt; once it is back every fire of the
//    down period is delivered (a deferred attempt counts; their retry policy allows 10).
//    `E2E_ADAPTIVE_DOWN_MS=60000` runs the outage for the minute (the suite keeps 20 s).
const DOWN_MS = Number(process.env.E2E_ADAPTIVE_DOWN_MS ?? 20_000);
jest.setTimeout(70_000 + DOWN_MS);

const APP = 'e2e-adaptive';
const OPEN_MS = 5_000;
const FAILURES = 3;
const ENV = { TIMER_WINDOW_MINUTES: '5', TIMER_CIRCUIT_FAILURES: String(FAILURES), TIMER_CIRCUIT_OPEN_MS: String(OPEN_MS) };

let stack: Stack;
let limited: Receiver;
let flaky: Receiver;

beforeAll(async () => {
  [limited, flaky] = await Promise.all([Receiver.start(), Receiver.start()]);
  stack = await Stack.start({ env: ENV });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await limited?.close();
  await flaky?.close();
});

type Records = { data: TaskRecord[]; total: number };
const records = (q: Record<string, string>) => stack.api.call<Records>('GET', `/api/task/v1/records?${new URLSearchParams({ app: APP, pageSize: '100', ...q })}`);

it('honours Retry-After and opens the circuit of an origin that is down, delivering every fire once it is back', async () => {
  const api = stack.api;
  const start = nextSecond(3_000);
  // Origin 1: the first call answers 503 Retry-After: 10, the rest 200.
  let limitedAt = 0;
  limited.respond(() => {
    if (limitedAt > 0) return undefined;
    limitedAt = Date.now();
    return { status: 503, headers: { 'retry-after': '10' } };
  });
  // Origin 2: 500 for DOWN_MS from the first fire.
  const backAt = start + DOWN_MS;
  flaky.respond((d) => (d.receivedAt < backAt ? { status: 500 } : undefined));

  const retry = { maxAttempts: 10, backoffMs: 1_000 };
  const every = (name: string, url: string, count: number) =>
    api.createEnabled({ app: APP, name, every: '1s', startAt: new Date(start).toISOString(), maxFires: count, notifyHTTPParam: { url, method: 'POST' }, retryPolicy: retry });
  const limitedTimer = await every('limited', limited.url('/ra'), 5);
  const flakyTimer = await every('flaky', flaky.url('/down'), 10);

  // 1. Retry-After: nothing reaches origin 1 for 10 s after the 503, then all five fires arrive.
  await pollUntil(() => limited.forTimer(limitedTimer).filter((d) => d.status === 200).length >= 5 || undefined, 40_000);
  const calls = limited.forTimer(limitedTimer);
  expect(calls[0].status).toBe(503);
  const after = calls.slice(1);
  expect(after.length).toBeGreaterThanOrEqual(5);
  for (const d of after) expect(d.receivedAt - limitedAt).toBeGreaterThanOrEqual(10_000 - 50);
  expect(new Set(after.map((d) => d.fireId)).size).toBe(5);
  const limitedRecords = (await pollUntil(async () => {
    const rs = (await records({ timerID: limitedTimer })).data;
    return rs.length === 5 && rs.every((r) => r.status === 2) ? rs : undefined;
  }, 5_000))!;
  expect(limitedRecords.map((r) => r.status)).toEqual([2, 2, 2, 2, 2]);
  const deferred = limitedRecords.flatMap((r) => r.attempts).filter((a) => a.error?.startsWith('retry_after:'));
  expect(deferred.length).toBeGreaterThanOrEqual(3); // fires due within the 10 s: recorded, not sent
  for (const a of deferred) expect(a).toMatchObject({ httpStatus: null, costMs: 0 });

  // 2. Down for DOWN_MS: a few failures open the circuit, then about one probe per open period.
  await sleepUntil(backAt);
  const whileDown = flaky.forTimer(flakyTimer).filter((d) => d.receivedAt < backAt).length;
  // Without the breaker: 10 fires with attempts every 1-2 s, some 60 calls. With it: FAILURES, then a
  // probe per OPEN_MS (each failed probe opens it for OPEN_MS again), plus slack for a first fire late.
  expect(whileDown).toBeGreaterThanOrEqual(FAILURES);
  expect(whileDown).toBeLessThanOrEqual(FAILURES + Math.ceil(DOWN_MS / OPEN_MS) + 2);

  // Back: every fire of the down period is delivered.
  const done = await pollUntil(async () => {
    const rs = (await records({ timerID: flakyTimer })).data;
    return rs.length === 10 && rs.every((r) => r.status >= 2) ? rs : undefined;
  }, 30_000);
  expect(done?.map((r) => r.status)).toEqual(Array(10).fill(2));
  const circuitDeferrals = done!.flatMap((r) => r.attempts).filter((a) => a.error?.startsWith('circuit_open:'));
  expect(circuitDeferrals.length).toBeGreaterThan(0);

  const metrics = (await scrapeMetrics(stack.port('executor')))!;
  const deferrals = metricBy(metrics, 'timer_delivery_deferred_total', 'reason');
  expect(deferrals.retry_after).toBeGreaterThanOrEqual(3);
  expect(deferrals.circuit_open).toBeGreaterThan(0);
  expect(metricBy(metrics, 'timer_origin_circuit_opened_total', '')['']).toBeGreaterThanOrEqual(1);
  expect(metricBy(metrics, 'timer_origin_circuit_state', 'origin')[`http://127.0.0.1:${flaky.port}`]).toBe(0);
});
