import { answerOf, Delivery, nextSecond, pollUntil, Receiver, sleep, sleepUntil, Stack, started } from '../support';

// Editing live timers end to end over the built roles: an every-second timer whose cron, zone and
// URL are replaced switches over with every second delivered exactly once; a schedule edit leaves
// none of the old schedule's later fires delivered and every new one once; stale versions get 409;
// an idempotent create retried returns the same id. The scenarios run at the same time on one stack.
jest.setTimeout(180_000);

const APP = 'e2e-edit';
/** Short windows keep the fires pre-created by enable small (3 windows of 5 min of a 1 s cron). */
const ENV = { TIMER_WINDOW_MINUTES: '5' };
/** The executor sees a changed definition within TIMER_EXECUTOR_CACHE_TTL_MS (default 2 s). */
const CACHE_TTL_MS = 2_000;

let stack: Stack;
let receiver: Receiver;

const hook = (path: string) => ({ url: receiver.url(path), method: 'POST' });
const iso = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/** Per scheduled second in [from, to): how many deliveries (first attempts and retries) it got. */
function perSecond(ds: Delivery[], from: number, to: number): Map<number, Delivery[]> {
  const out = new Map<number, Delivery[]>();
  for (let t = from; t < to; t += 1000) out.set(t, []);
  for (const d of ds) if (d.scheduledAt >= from && d.scheduledAt < to) out.get(d.scheduledAt)?.push(d);
  return out;
}

async function taskRows(timerId: string, from: number, to: number) {
  return stack.sql<{ run_at: string; status: number; error: string | null }>('SELECT run_at, status, error FROM tasks WHERE timer_id = ? AND run_at >= ? AND run_at < ? ORDER BY run_at', [
    timerId,
    from,
    to,
  ]);
}

let switchover: () => Promise<{ id: string; from: number; to: number; editAt: number; editedAt: number; stale: { status: number; body: unknown }; version: number }>;
let reschedule: () => Promise<{ id: string; editAt: number; to: number; superseded: number }>;

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start({ env: ENV });
  const api = stack.api;

  switchover = started(async () => {
    const id = await api.createEnabled({ app: APP, name: 'every-second', cron: '* * * * * *', notifyHTTPParam: hook('/before') });
    const from = nextSecond(3_000);
    await sleepUntil(from + 5_000);
    const { version } = (await api.getTimer(APP, id)) as { version: number };
    // Someone else's view of the timer (version 1, before the enable) is refused.
    const stale = await answerOf(api.updateTimer(id, 1, { app: APP, name: 'every-second', cron: '*/1 * * * * *', notifyHTTPParam: hook('/stale') }));
    // Same instants, written differently and in another zone; another URL.
    const editAt = Date.now();
    const edited = await api.updateTimer(id, version, { app: APP, name: 'every-second', cron: '*/1 * * * * *', timeZone: 'Asia/Kolkata', notifyHTTPParam: hook('/after') });
    const editedAt = Date.now();
    const to = nextSecond(10_000);
    await sleepUntil(to + 3_000);
    await api.unable(APP, id);
    return { id, from, to, editAt, editedAt, stale, version: edited.version };
  });

  reschedule = started(async () => {
    const id = await api.createEnabled({ app: APP, name: 'every-2s', cron: '*/2 * * * * *', notifyHTTPParam: hook('/reschedule') });
    await sleep(6_000);
    const { version } = (await api.getTimer(APP, id)) as { version: number };
    const editAt = Date.now();
    const { superseded } = await api.patchTimer(APP, id, version, { cron: '*/3 * * * * *' });
    const to = nextSecond(12_000);
    await sleepUntil(to + 3_000);
    await api.unable(APP, id);
    return { id, editAt, to, superseded };
  });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

test('an edit of the cron, the zone and the URL of a live every-second timer switches over with no missing and no doubled second', async () => {
  const s = await switchover();
  expect(s.stale.status).toBe(409);
  expect(s.stale.body).toMatchObject({ code: 40901, data: { version: 2 } });
  expect(s.version).toBe(3);
  await pollUntil(async () => (await taskRows(s.id, s.from, s.to)).every((r) => r.status >= 2), 15_000);

  const seconds = perSecond(receiver.forTimer(s.id), s.from, s.to);
  const missing = [...seconds].filter(([, ds]) => ds.length === 0).map(([t]) => iso(t));
  const doubled = [...seconds].filter(([, ds]) => ds.length > 1).map(([t, ds]) => `${iso(t)} x${ds.length}`);
  expect({ missing, doubled }).toEqual({ missing: [], doubled: [] });
  // Before the edit: the old URL; from one cache TTL after it: the new one; one switch, never back.
  const paths = [...seconds].map(([t, [d]]) => ({ t, path: d.path }));
  expect(paths.filter((p) => p.t < s.editAt - 1_000 && p.path !== '/before')).toEqual([]);
  expect(paths.filter((p) => p.t >= s.editedAt + CACHE_TTL_MS + 1_000 && p.path !== '/after')).toEqual([]);
  const firstAfter = paths.findIndex((p) => p.path === '/after');
  expect(firstAfter).toBeGreaterThan(0);
  expect(paths.slice(firstAfter).filter((p) => p.path !== '/after')).toEqual([]);
  expect(receiver.deliveries.filter((d) => d.path === '/stale')).toEqual([]);
  // Same instants: nothing was superseded, every fire of the range succeeded.
  const rows = await taskRows(s.id, s.from, s.to);
  expect(rows.filter((r) => r.status !== 2).map((r) => `${iso(Number(r.run_at))} ${r.status} ${r.error}`)).toEqual([]);

  const versions = await stack.api.versions(APP, s.id);
  expect(versions.data.map((v) => [v.version, v.change, v.timeZone, v.notifyHTTPParam.url])).toEqual([
    [4, 'disable', 'Asia/Kolkata', receiver.url('/after')],
    [3, 'update', 'Asia/Kolkata', receiver.url('/after')],
    [2, 'enable', 'UTC', receiver.url('/before')],
    [1, 'create', 'UTC', receiver.url('/before')],
  ]);
});

test('a schedule edit: none of the old schedule\'s later fires goes out, every new one goes out once', async () => {
  const r = await reschedule();
  const from = Math.ceil(r.editAt / 1000) * 1000;
  await pollUntil(async () => (await taskRows(r.id, from, r.to)).every((x) => x.status >= 2), 15_000);
  expect(r.superseded).toBeGreaterThan(0);
  const ds = receiver.forTimer(r.id);
  // A fire of the old schedule already claimed when the edit came may still go out (it finishes as
  // claimed); from a second after the edit on, only the new schedule.
  const late = ds.filter((d) => d.scheduledAt >= r.editAt + 1_000 && d.scheduledAt < r.to);
  expect(late.filter((d) => d.scheduledAt % 3_000 !== 0).map((d) => iso(d.scheduledAt))).toEqual([]);
  const expected: number[] = [];
  for (let t = Math.ceil((r.editAt + 1) / 3_000) * 3_000; t < r.to; t += 3_000) expected.push(t);
  const got = perSecond(ds, from, r.to);
  expect(expected.filter((t) => got.get(t)?.length !== 1).map((t) => `${iso(t)} x${got.get(t)?.length ?? 0}`)).toEqual([]);
  // The ledger: the old schedule's fires after the edit are recorded missed, as superseded.
  const rows = await taskRows(r.id, r.editAt + 1_000, r.to);
  const notNew = rows.filter((x) => Number(x.run_at) % 3_000 !== 0);
  expect(notNew.length).toBeGreaterThan(0);
  expect(notNew.filter((x) => x.status !== 4 || x.error !== 'superseded by version 3')).toEqual([]);
});

test('an idempotent retry of a create returns the same id; the same key with another body is 422', async () => {
  const t = { app: APP, name: 'idempotent', cron: '0 0 0 1 1 *', notifyHTTPParam: hook('/idempotent') };
  const first = await stack.api.createTimer(t, { idempotencyKey: 'create-once' });
  const retried = await stack.api.createTimer(t, { idempotencyKey: 'create-once' });
  expect(retried).toBe(first);
  const other = await answerOf(stack.api.createTimer({ ...t, name: 'idempotent-2' }, { idempotencyKey: 'create-once' }));
  expect(other).toMatchObject({ status: 422, body: { code: 42200 } });
  const [{ n }] = await stack.sql<{ n: string }>("SELECT COUNT(*) AS n FROM timers WHERE app = ? AND name LIKE 'idempotent%'", [APP]);
  expect(Number(n)).toBe(1);
});
