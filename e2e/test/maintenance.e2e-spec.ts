import { nextSecond, pollUntil, Receiver, sleepUntil, Stack } from '../support';

// Maintenance windows end to end over the built roles: one app's two every-second timers under a 4 s
// `skip` window get no callback inside it and each of its fires is recorded `skipped: maintenance`;
// another app's two under a 4.5 s `defer` window get none inside it either, each fire recorded
// deferred, and exactly one callback each at the window's end (x.500 s, a fire of no schedule).
jest.setTimeout(90_000);

const SKIP = 'e2e-mw-skip';
const DEFER = 'e2e-mw-defer';
const MISSED = 4;

let stack: Stack;
let receiver: Receiver;

const iso = (ms: number) => new Date(ms).toISOString().slice(11, 23);

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start({ env: { TIMER_WINDOW_MINUTES: '5' } });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

test('a skip window delivers nothing inside it and records each fire skipped; a defer window delivers one fire per timer at its end', async () => {
  const api = stack.api;
  const hook = (path: string) => ({ url: receiver.url(path), method: 'POST' });
  const skipped = [
    await api.createEnabled({ app: SKIP, name: 'a', cron: '* * * * * *', notifyHTTPParam: hook('/a') }),
    await api.createEnabled({ app: SKIP, name: 'b', cron: '* * * * * *', notifyHTTPParam: hook('/b') }),
  ];
  const deferred = [
    await api.createEnabled({ app: DEFER, name: 'c', cron: '* * * * * *', notifyHTTPParam: hook('/c') }),
    await api.createEnabled({ app: DEFER, name: 'd', cron: '* * * * * *', notifyHTTPParam: hook('/d') }),
  ];
  expect(await pollUntil(() => [...skipped, ...deferred].every((id) => receiver.forTimer(id).length >= 1), 20_000)).toBe(true);

  // 3 s ahead: every executor has read the windows (every 1 s) before they open.
  const from = nextSecond(3_000);
  const skipTo = from + 4_000;
  const deferTo = from + 4_500;
  const create = (body: object) => api.call<{ data: { id: string } }>('POST', '/api/app/v1/maintenance', body);
  await create({ app: SKIP, timerIds: skipped, from, to: skipTo, policy: 'skip' });
  await create({ app: DEFER, from, to: deferTo, policy: 'defer' });
  await sleepUntil(deferTo + 2_500);
  for (const id of skipped) await api.unable(SKIP, id);
  for (const id of deferred) await api.unable(DEFER, id);

  const inside = (id: string, to: number) => receiver.forTimer(id).filter((d) => d.scheduledAt >= from && d.scheduledAt < to).map((d) => iso(d.scheduledAt));
  for (const id of skipped) {
    expect(inside(id, skipTo)).toEqual([]);
    // Delivered again from the window's end on.
    expect(receiver.forTimer(id).some((d) => d.scheduledAt === skipTo)).toBe(true);
  }
  for (const id of deferred) {
    expect(inside(id, deferTo)).toEqual([]);
    expect(receiver.forTimer(id).filter((d) => d.scheduledAt === deferTo).map((d) => iso(d.scheduledAt))).toEqual([iso(deferTo)]);
  }

  const rows = async (app: string, to: number) =>
    stack.sql<{ timer_id: string; run_at: string; status: number; error: string | null }>(
      'SELECT timer_id, run_at, status, error FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ? ORDER BY timer_id, run_at',
      [app, from, to],
    );
  const skipRows = await rows(SKIP, skipTo);
  expect(skipRows).toHaveLength(2 * 4);
  expect(skipRows.filter((r) => r.status !== MISSED || r.error !== 'skipped: maintenance').map((r) => `${r.timer_id}@${iso(Number(r.run_at))} ${r.status} ${r.error}`)).toEqual([]);
  const deferRows = await rows(DEFER, deferTo);
  expect(deferRows).toHaveLength(2 * 5);
  expect(deferRows.filter((r) => r.status !== MISSED || r.error !== `deferred: maintenance, to ${deferTo}`).map((r) => `${r.timer_id}@${iso(Number(r.run_at))} ${r.status} ${r.error}`)).toEqual([]);
});
