import { Delivery, nextSecond, pollUntil, Receiver, sleep, sleepUntil, Stack } from '../support';

// App-wide pause and resume, and a disable that leaves no fire ahead, end to end over the built roles:
// two every-second timers of one app and one of another; the paused app stops within 2 s while the
// other keeps firing; after the resume no fire of the paused interval is delivered and each of them
// is recorded missed with the reason `paused`; a disable leaves no pending fire after it.
jest.setTimeout(90_000);

const PAUSED = 'e2e-pause';
const OTHER = 'e2e-pause-other';
/** Short windows keep the fires pre-created by enable small (3 windows of 5 min of a 1 s cron). */
const ENV = { TIMER_WINDOW_MINUTES: '5' };

interface PauseAnswer {
  app: string;
  changed: boolean;
  paused: boolean;
  pausedAt: number | null;
  resumedAt: number | null;
  missedFires: number;
}

let stack: Stack;
let receiver: Receiver;

const iso = (ms: number) => new Date(ms).toISOString().slice(11, 23);
const seconds = (ds: Delivery[], from: number, to: number) => ds.filter((d) => d.scheduledAt >= from && d.scheduledAt < to).map((d) => d.scheduledAt);

async function appRoute(path: 'pause' | 'resume', app: string): Promise<PauseAnswer> {
  return (await stack.api.call<{ data: PauseAnswer }>('POST', `/api/app/v1/${path}`, { app })).data;
}

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start({ env: ENV });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

test('pause stops every timer of the app within 2 s, resume continues with no fire of the paused interval; disable leaves no fire ahead', async () => {
  const api = stack.api;
  const hook = (path: string) => ({ url: receiver.url(path), method: 'POST' });
  const paused = [
    await api.createEnabled({ app: PAUSED, name: 'a', cron: '* * * * * *', notifyHTTPParam: hook('/a') }),
    await api.createEnabled({ app: PAUSED, name: 'b', cron: '* * * * * *', notifyHTTPParam: hook('/b') }),
  ];
  const other = await api.createEnabled({ app: OTHER, name: 'c', cron: '* * * * * *', notifyHTTPParam: hook('/c') });
  const firing = await pollUntil(() => [...paused, other].every((id) => receiver.forTimer(id).length >= 2), 20_000);
  expect(firing).toBe(true);

  const pause = await appRoute('pause', PAUSED);
  const pausedAnswerAt = Date.now();
  expect(pause).toMatchObject({ app: PAUSED, changed: true, paused: true, resumedAt: null });
  expect((await appRoute('pause', PAUSED)).changed).toBe(false);
  const pausedAt = pause.pausedAt!;
  await sleep(8_000);

  const resume = await appRoute('resume', PAUSED);
  const R = resume.resumedAt!;
  expect(resume).toMatchObject({ app: PAUSED, changed: true, paused: false, pausedAt });
  expect(R).toBeGreaterThan(pausedAnswerAt + 8_000);
  const end = nextSecond(5_000);
  await sleepUntil(end + 1_500);

  // The disable of the other app's timer: nothing pending after it, in MySQL.
  const disabledAt = Date.now();
  const disabled = (await api.call<{ data: { changed: boolean; removedFires: number } }>('POST', '/api/timer/v1/unable', { id: other, app: OTHER })).data;
  expect(disabled.changed).toBe(true);
  expect(disabled.removedFires).toBeGreaterThan(200); // the rest of three 5-minute windows of a 1 s cron
  const [{ n: ahead }] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ? AND run_at > ? AND status = 0', [other, disabledAt]);
  expect(Number(ahead)).toBe(0);
  for (const id of paused) await api.unable(PAUSED, id);

  const stop = pausedAnswerAt + 2_000;
  const all = paused.flatMap((id) => receiver.forTimer(id));
  // Paused: no callback of a fire later than 2 s after the answer, until the resume instant.
  expect(seconds(all, stop, R).map(iso)).toEqual([]);
  // The other app kept firing meanwhile, every second.
  const otherDuring = seconds(receiver.forTimer(other), stop, R);
  expect(otherDuring.length).toBeGreaterThanOrEqual(Math.floor((R - stop) / 1_000) - 1);
  // Resumed: every second from R on, for each timer, once (nothing of the interval came back as a burst).
  for (const id of paused) {
    const expected: number[] = [];
    for (let t = Math.ceil(R / 1_000) * 1_000; t < end; t += 1_000) expected.push(t);
    expect(seconds(receiver.forTimer(id), R, end).sort().map(iso)).toEqual(expected.map(iso));
  }
  // The ledger: every fire of the paused interval (after the first 2 s) is recorded missed, reason paused.
  const rows = await stack.sql<{ timer_id: string; run_at: string; status: number; error: string | null }>(
    'SELECT timer_id, run_at, status, error FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ? ORDER BY run_at',
    [PAUSED, pausedAt, R],
  );
  const interval = rows.filter((r) => Number(r.run_at) >= stop);
  expect(interval.length).toBeGreaterThanOrEqual(2 * (Math.floor((R - stop) / 1_000) - 1));
  expect(interval.filter((r) => r.status !== 4 || r.error !== 'paused').map((r) => `${r.timer_id}@${iso(Number(r.run_at))} ${r.status} ${r.error}`)).toEqual([]);
  // Within the first 2 s a fire was either delivered or recorded paused, nothing is left open.
  expect(rows.filter((r) => !(r.status === 2 || (r.status === 4 && r.error === 'paused'))).map((r) => `${r.timer_id}@${iso(Number(r.run_at))} ${r.status}`)).toEqual([]);
});
