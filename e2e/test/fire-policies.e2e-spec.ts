import { Delivery, mapLimit, nextSecond, pollUntil, Receiver, sleep, sleepUntil, Stack } from '../support';

// The fire policies end to end over the built roles, with two executor processes (the overlap state
// is shared through Redis): overlapPolicy skip and buffer_one against a receiver that answers after
// 2.5 s; catchupPolicy all, latest and none on fires left past due (rows a downtime leaves behind,
// rescued by the reconciler); jitterMs spreading 100 timers due on one second, a retried fire keeping
// its delay. The scenarios run at the same time on one stack.
jest.setTimeout(120_000);

const APP = 'e2e-policies';
const ENV = { TIMER_RECONCILER_INTERVAL_MS: '1000', TIMER_RECONCILER_GRACE_MS: '2000' };
const SLOW_MS = 2_500;
const JITTER_MS = 3_000;
const MISSED = 4;

let stack: Stack;
let receiver: Receiver;

const hook = (path: string) => ({ url: receiver.url(path), method: 'POST' });

async function rows(timerId: string) {
  const found = await stack.sql<{ run_at: string; status: number; error: string | null }>('SELECT run_at, status, error FROM tasks WHERE timer_id = ? ORDER BY run_at', [timerId]);
  return found.map((r) => ({ runAt: Number(r.run_at), status: r.status, error: r.error }));
}

/** A timer's calls with scheduledAt in [from, to), and its fires there recorded skipped for an overlap. */
async function overlapRun(timerId: string, from: number, to: number): Promise<{ ds: Delivery[]; skipped: number }> {
  const ds = receiver.forTimer(timerId).filter((d) => d.scheduledAt >= from && d.scheduledAt < to);
  const fires = (await rows(timerId)).filter((r) => r.runAt >= from && r.runAt < to);
  return { ds, skipped: fires.filter((r) => r.status === MISSED && r.error?.startsWith('skipped: overlap, fire ')).length };
}

/** Deliveries of a timer whose calls overlapped at the receiver (each one is held SLOW_MS). */
function overlaps(ds: Delivery[]): number {
  const starts = ds.map((d) => d.receivedAt).sort((a, b) => a - b);
  return starts.filter((t, i) => i > 0 && t - starts[i - 1] < SLOW_MS - 50).length;
}

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start({ env: ENV, replicas: { executor: 2 } });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

describe('fire policies', () => {
  let overlap: Promise<{ skip: string; buffer: string; from: number; to: number }>;
  let catchup: Promise<{ ids: Record<'all' | 'latest' | 'none', string>; late: number[]; next: number }>;
  let jitter: Promise<{ ids: string[]; runAt: number; retried: Set<string> }>;

  beforeAll(() => {
    const api = stack.api;
    overlap = (async () => {
      const every = (name: string, overlapPolicy: 'skip' | 'buffer_one') => api.createEnabled({ app: APP, name, cron: '* * * * * *', overlapPolicy, notifyHTTPParam: hook(`/${name}`) });
      const [skip, buffer] = await Promise.all([every('skip', 'skip'), every('buffer', 'buffer_one')]);
      receiver.delayTimers([skip, buffer], SLOW_MS);
      const from = nextSecond(1_000);
      const to = from + 10_000;
      await sleepUntil(to + 500);
      await Promise.all([api.unable(APP, skip), api.unable(APP, buffer)]);
      return { skip, buffer, from, to };
    })();

    catchup = (async () => {
      // Three fires of an every-30s timer left past due (75, 45 and 15 s late), as a downtime leaves
      // them: pending rows the reconciler re-publishes; the next fire is 15 s ahead.
      const last = nextSecond() - 15_000;
      const late = [last - 60_000, last - 30_000, last];
      const timer = (policy: 'all' | 'latest' | 'none', window?: number) =>
        api.createEnabled({ app: APP, name: `catchup-${policy}`, every: '30s', startAt: late[0], catchupPolicy: policy, catchupWindowMs: window, notifyHTTPParam: hook(`/catchup-${policy}`) });
      const ids = { all: await timer('all', 60_000), latest: await timer('latest'), none: await timer('none') };
      for (const id of Object.values(ids)) {
        await stack.sql(`INSERT IGNORE INTO tasks (app, timer_id, run_at) VALUES ${late.map(() => '(?, ?, ?)').join(', ')}`, late.flatMap((t) => [APP, id, t]));
      }
      return { ids, late, next: last + 30_000 };
    })();

    jitter = (async () => {
      const runAt = nextSecond(8_000);
      const names = Array.from({ length: 100 }, (_, i) => `jitter-${i}`);
      const ids = await mapLimit(names, 10, (name) =>
        api.createEnabled({ app: APP, name, runAt, jitterMs: JITTER_MS, retryPolicy: { maxAttempts: 3, backoffMs: 1_000 }, notifyHTTPParam: hook('/jitter') }),
      );
      const retried = new Set(ids.slice(0, 5));
      receiver.respond((d) => (retried.has(d.timerId) && d.attempt === 1 ? { status: 500 } : undefined));
      return { ids, runAt, retried };
    })();
    return Promise.all([overlap, catchup, jitter]);
  }, 60_000);

  it('skip: never two calls of the timer at once; the fires in between are recorded missed (skipped: overlap)', async () => {
    const { skip, from, to } = await overlap;
    const { ds, skipped } = await overlapRun(skip, from, to);
    expect(overlaps(ds)).toBe(0);
    expect(ds.length).toBeGreaterThanOrEqual(3); // one every 2.5-3 s
    expect(skipped).toBeGreaterThanOrEqual(5);
    expect(ds.length + skipped).toBe(10); // every fire delivered or recorded skipped
    expect(new Set(ds.map((d) => d.fireId)).size).toBe(ds.length);
  });

  it('buffer_one: one call at a time, the waiting fire starts as soon as the previous one is answered, further ones skipped', async () => {
    const { buffer, from, to } = await overlap;
    const { ds, skipped } = await overlapRun(buffer, from, to);
    expect(overlaps(ds)).toBe(0);
    // Back to back: the buffered fire waited for the running one and followed it within a poll or two.
    const starts = ds.map((d) => d.receivedAt).sort((a, b) => a - b);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]);
    expect(Math.max(...gaps)).toBeLessThan(SLOW_MS + 1_000);
    expect(ds.filter((d) => d.receivedAt - d.scheduledAt > 1_000).length).toBeGreaterThanOrEqual(2); // delivered late: they waited
    expect(skipped).toBeGreaterThanOrEqual(4);
    // Within the range every fire is called, skipped, or (the last ones) waiting when the timer was disabled.
    expect(ds.length + skipped).toBeGreaterThanOrEqual(9);
  });

  it('catch-up: all within its window, latest only the most recent late fire (others coalesced), none records late fires missed', async () => {
    const { ids, late, next } = await catchup;
    const settled = async (id: string) => (await rows(id)).filter((r) => late.includes(r.runAt) && r.status >= 2);
    await pollUntil(async () => (await Promise.all(Object.values(ids).map(settled))).every((s) => s.length === 3) || undefined, 30_000);
    const outcome = async (id: string) => (await rows(id)).filter((r) => late.includes(r.runAt)).map((r) => (r.status === MISSED ? (r.error ?? '').replace(/\d+ ms$/, 'N ms') : 'delivered'));
    expect(await outcome(ids.all)).toEqual(['late by N ms', 'delivered', 'delivered']);
    expect(await outcome(ids.latest)).toEqual(['coalesced', 'coalesced', 'delivered']);
    expect(await outcome(ids.none)).toEqual(['late by N ms', 'late by N ms', 'late by N ms']);
    expect(receiver.forTimer(ids.latest).map((d) => d.scheduledAt)).toEqual([late[2]]);
    // none still delivers a fire on time.
    await pollUntil(() => receiver.forTimer(ids.none).some((d) => d.scheduledAt === next) || undefined, next - Date.now() + 10_000);
    expect(receiver.forTimer(ids.none).map((d) => d.scheduledAt)).toEqual([next]);
  });

  it('jitter: 100 timers due on one second are spread across jitterMs, each delivered once, a retry keeping its delay', async () => {
    const { ids, runAt, retried } = await jitter;
    const all = new Set(ids);
    const firsts = () => receiver.deliveries.filter((d) => all.has(d.timerId) && d.status === 200);
    await pollUntil(() => firsts().length >= 100 || undefined, runAt + JITTER_MS - Date.now() + 15_000);
    await sleep(500);
    const ok = firsts();
    expect(new Set(ok.map((d) => d.fireId)).size).toBe(100);
    expect(ok).toHaveLength(100);
    const delays = ok.map((d) => d.jitteredAt - d.scheduledAt);
    expect(ok.every((d) => d.scheduledAt === runAt)).toBe(true);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(JITTER_MS);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(JITTER_MS / 2);
    // Each first attempt went out at its jittered time (not before it, and not long after).
    const firstAttempts = receiver.deliveries.filter((d) => all.has(d.timerId) && d.attempt === 1);
    expect(firstAttempts.every((d) => d.receivedAt >= d.jitteredAt - 20 && d.receivedAt < d.jitteredAt + 1_000)).toBe(true);
    for (const id of retried) {
      const tries = receiver.forTimer(id);
      expect(tries.map((d) => d.attempt)).toEqual([1, 2]);
      expect(tries[1].jitteredAt).toBe(tries[0].jitteredAt);
    }
  });
});
