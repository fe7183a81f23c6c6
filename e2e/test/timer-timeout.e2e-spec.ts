import { Receiver, Stack, TaskRecord, nextSecond, pollUntil } from '../support';

// A timer's own callback timeout over the built roles: with the global TIMER_CALLBACK_TIMEOUT_MS at
// 10 s, a timer with notifyHTTPParam.timeoutMs 1000 calling a receiver that answers after 5 s is cut
// at about 1 s on each attempt of its retry policy and ends failed, while a timer without it waits
// for the answer. The records API then shows both fires with every attempt, app-wide and after a delete.
jest.setTimeout(90_000);

const APP = 'e2e-timeout';
const ENV = { TIMER_WINDOW_MINUTES: '5', TIMER_CALLBACK_TIMEOUT_MS: '10000' };
const SLOW_MS = 5_000;

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await Receiver.start();
  receiver.respond((d) => (d.path === '/slow' ? { delayMs: SLOW_MS } : undefined));
  stack = await Stack.start({ env: ENV });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

type Records = { data: TaskRecord[]; total: number };
const records = (q: Record<string, string>) => stack.api.call<Records>('GET', `/api/task/v1/records?${new URLSearchParams({ app: APP, ...q })}`);

it('cuts a 5 s callback at the timer\'s 1 s timeout on every attempt, records each one, and keeps the records after a delete', async () => {
  const api = stack.api;
  const runAt = nextSecond(4_000);
  const cut = await api.createEnabled({
    app: APP,
    name: 'cut-at-1s',
    runAt,
    notifyHTTPParam: { url: receiver.url('/slow'), method: 'POST', timeoutMs: 1_000 },
    retryPolicy: { maxAttempts: 2, backoffMs: 1_000 },
  });
  const waits = await api.createEnabled({ app: APP, name: 'global-10s', runAt, notifyHTTPParam: { url: receiver.url('/slow'), method: 'POST' } });
  expect((await api.getTimer(APP, cut)).notifyHTTPParam).toMatchObject({ timeoutMs: 1_000 });

  const settled = async (id: string): Promise<TaskRecord> => {
    const fireId = `${id}-${runAt}`;
    const found = await pollUntil(async () => (await records({ fireID: fireId })).data.find((r) => r.status >= 2), 30_000);
    if (!found) throw new Error(`fire ${fireId} not settled within 30 s`);
    return found;
  };
  const [failed, delivered] = await Promise.all([settled(cut), settled(waits)]);

  // The cut fire: both attempts made, each given up after about 1 s, then recorded failed.
  expect(failed).toMatchObject({ fireId: `${cut}-${runAt}`, status: 3, attempt: 2, error: 'no answer within 1000 ms' });
  expect(failed.attempts.map((a) => [a.attempt, a.httpStatus, a.error])).toEqual([
    [1, null, 'no answer within 1000 ms'],
    [2, null, 'no answer within 1000 ms'],
  ]);
  for (const a of failed.attempts) {
    expect(a.costMs).toBeGreaterThanOrEqual(950);
    expect(a.costMs).toBeLessThan(2_500);
  }
  expect(failed.attempts[1].startedAt - failed.attempts[0].startedAt).toBeGreaterThanOrEqual(1_000 + 800);
  expect(receiver.forTimer(cut).map((d) => d.attempt)).toEqual([1, 2]);

  // The same callback without a timer timeout waits (global 10 s) and succeeds.
  expect(delivered).toMatchObject({ status: 2, attempt: 1, httpStatus: 200 });
  expect(delivered.attempts).toHaveLength(1);
  expect(delivered.attempts[0].costMs).toBeGreaterThanOrEqual(SLOW_MS - 50);

  // App-wide, by status and time range; then by timer id and fire id once the timer is deleted.
  const range = { from: String(runAt), to: new Date(runAt + 1).toISOString() };
  expect((await records({ status: '3', ...range })).data.map((r) => r.fireId)).toEqual([`${cut}-${runAt}`]);
  expect((await records(range)).total).toBe(2);
  await api.deleteTimer(APP, cut);
  expect((await records({ timerID: cut })).data).toMatchObject([{ fireId: `${cut}-${runAt}`, status: 3 }]);
  expect((await records({ fireID: `${cut}-${runAt}` })).data[0].attempts).toHaveLength(2);
});
