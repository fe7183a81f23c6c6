import { answerOf, nextSecond, pollUntil, Receiver, sleepUntil, Stack, started } from '../support';

// Bounds, intervals and completion end to end over the built roles: startAt, endAt and maxFires bound
// the fires exactly (the receiver gets exactly the expected instants, each once, and no row exists
// beyond them); an interval timer of 3 s fires every 3 s from its anchor; bounded and one-shot timers
// end `completed` (the migrator's completion sweep), which an enable refuses until an edit gives the
// timer future fires. The scenarios share one stack and one time line.
jest.setTimeout(120_000);

const APP = 'e2e-bounds';
const S = 1_000;

let stack: Stack;
let receiver: Receiver;
let run: () => Promise<{ start: number; ids: Record<string, string> }>;

const hook = (path: string) => ({ url: receiver.url(path), method: 'POST' });
const iso = (ms: number) => new Date(ms).toISOString().slice(11, 23);
const status = async (id: string) => Number((await stack.api.getTimer(APP, id)).status);

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start();
  const api = stack.api;
  run = started(async () => {
    const start = nextSecond(4_000);
    const ids = {
      // every 3 s from the anchor, endAt inclusive: start, +3, +6, +9, +12.
      every: await api.createEnabled({ app: APP, name: 'every-3s', every: '3s', startAt: new Date(start).toISOString(), endAt: start + 12 * S, notifyHTTPParam: hook('/every') }),
      // every second from start + 2 s, four fires.
      maxFires: await api.createEnabled({ app: APP, name: 'max-fires', cron: '* * * * * *', startAt: start + 2 * S, maxFires: 4, notifyHTTPParam: hook('/max') }),
      // every second in [start + 1 s, start + 4.5 s].
      window: await api.createEnabled({ app: APP, name: 'window', cron: '* * * * * *', startAt: start + 500, endAt: start + 4_500, notifyHTTPParam: hook('/window') }),
      once: await api.createEnabled({ app: APP, name: 'once', runAt: start + S, notifyHTTPParam: hook('/once') }),
    };
    await sleepUntil(start + 13 * S);
    return { start, ids };
  });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

test('startAt, endAt, maxFires and every bound the fires exactly; the timers end completed', async () => {
  const { start, ids } = await run();
  const expected: Record<string, number[]> = {
    every: [0, 3, 6, 9, 12].map((k) => start + k * S),
    maxFires: [2, 3, 4, 5].map((k) => start + k * S),
    window: [1, 2, 3, 4].map((k) => start + k * S),
    once: [start + S],
  };
  // Completed once the last fire settled (the sweep runs every 5 s).
  await pollUntil(async () => (await Promise.all(Object.values(ids).map(status))).every((s) => s === 3), 30_000, 500);

  for (const [name, id] of Object.entries(ids)) {
    const got = receiver.forTimer(id).map((d) => d.scheduledAt).sort((a, b) => a - b);
    expect({ name, got: got.map(iso) }).toEqual({ name, got: expected[name].map(iso) });
    const rows = await stack.sql<{ run_at: string; status: number }>('SELECT run_at, status FROM tasks WHERE timer_id = ? ORDER BY run_at', [id]);
    expect({ name, rows: rows.map((r) => `${iso(Number(r.run_at))} ${r.status}`) }).toEqual({ name, rows: expected[name].map((t) => `${iso(t)} 2`) });
  }
  // Every 3 s apart, on time: the callbacks themselves, not just their scheduled instants.
  const every = receiver.forTimer(ids.every).sort((a, b) => a.scheduledAt - b.scheduledAt);
  expect(every.map((d) => d.receivedAt - d.scheduledAt).filter((late) => late < 0 || late > 2_500)).toEqual([]);

  const shown = await stack.api.getTimer(APP, ids.every);
  expect(shown).toMatchObject({ every: '3s', cron: null, runAt: null, startAt: start, endAt: start + 12 * S, maxFires: null, status: 3, nextFireTimes: [] });
  expect(await stack.api.getTimer(APP, ids.maxFires)).toMatchObject({ startAt: start + 2 * S, endAt: null, maxFires: 4, status: 3 });
  const listed = await stack.api.call<{ data: { id: number }[]; total: number }>('GET', `/api/timer/v1/defs?app=${APP}&status=3&pageSize=10`);
  expect(listed.data.map((t) => String(t.id)).sort()).toEqual(Object.values(ids).sort());
  const versions = await stack.api.versions(APP, ids.once);
  expect(versions.data.map((v) => [v.version, v.change, v.status])).toEqual([
    [3, 'complete', 3],
    [2, 'enable', 2],
    [1, 'create', 1],
  ]);

  // Completed with no fire left: enable is refused; an edit that gives it a future fire, then enable, works.
  const refused = await answerOf(stack.api.enable(APP, ids.every));
  expect(refused).toMatchObject({ status: 409, body: { msg: expect.stringMatching(/^timer is completed/) } });
  const later = Date.now() + 3_600_000;
  await stack.api.patchTimer(APP, ids.every, 3, { endAt: later });
  expect(await stack.api.enable(APP, ids.every)).toMatchObject({ changed: true });
  expect(await stack.api.getTimer(APP, ids.every)).toMatchObject({ status: 2, endAt: later, startAt: start });
  await stack.api.unable(APP, ids.every);
});
