import { accountFires, describeAccount, Delivery, nextSecond, percentiles, periodicFireIds, pollUntil, Receiver, sleepUntil, Stack, started } from '../support';

// The firing pipeline end to end: the five built roles as separate processes over the real broker,
// MariaDB and Redis (fresh database, own key prefix and namespace), a local HTTP receiver, the REST
// API. The scenarios run at the same time on one stack (each on its own timers), so the file takes
// about as long as its longest scenario (the 20 s one). Needs `npm run build` first.
jest.setTimeout(240_000);

const APP = 'e2e-pipeline';
/** Short windows keep the fires pre-created by enable small (3 windows of 5 min of a 1 s cron = 900 rows). */
const ENV = { TIMER_WINDOW_MINUTES: '5' };

let stack: Stack;
let receiver: Receiver;

const sec = (ms: number) => new Date(ms).toISOString().slice(11, 23);
const hook = (name: string) => ({ url: receiver.url(`/${name}`), method: 'POST', header: { 'Content-Type': ['application/json'] }, body: `{"scenario":"${name}"}` });
const after = (ds: Delivery[], t: number) => ds.filter((d) => d.receivedAt > t);

/** Deliveries of `timerId` whose scheduled time lies in [from, to). */
const inWindow = (timerId: string, from: number, to: number) => receiver.forTimer(timerId).filter((d) => d.scheduledAt >= from && d.scheduledAt < to);

async function taskRows(timerId: string, from = 0, to = Number.MAX_SAFE_INTEGER) {
  return stack.sql<{ run_at: string; status: number; attempt: number; http_status: number | null; error: string | null }>(
    'SELECT run_at, status, attempt, http_status, error FROM tasks WHERE timer_id = ? AND run_at >= ? AND run_at < ? ORDER BY run_at',
    [timerId, from, to],
  );
}

// Scenario drivers, started in beforeAll and awaited by the tests.
let everySecond: () => Promise<{ id: string; from: number; to: number }>;
let oneShot: () => Promise<{ id: string; runAt: number }>;
let unable: () => Promise<{ id: string; unabledAt: number; observedUntil: number }>;
let deleted: () => Promise<{ id: string; deletedAt: number; observedUntil: number; pendingAfterDelete: number }>;
let failing: () => Promise<{ id: string; runAt: number; maxAttempts: number; backoffMs: number }>;

beforeAll(async () => {
  receiver = await Receiver.start({ keepBodies: true });
  stack = await Stack.start({ env: ENV });
  const api = stack.api;

  everySecond = started(async () => {
    const id = await api.createEnabled({ app: APP, name: 'every-second', cron: '* * * * * *', notifyHTTPParam: hook('every-second') });
    const from = nextSecond(2000);
    const to = from + 20_000;
    await sleepUntil(to + 3000);
    await api.unable(APP, id);
    return { id, from, to };
  });

  oneShot = started(async () => {
    const runAt = Date.now() + 4321;
    const id = await api.createEnabled({ app: APP, name: 'one-shot', runAt, notifyHTTPParam: hook('one-shot') });
    await sleepUntil(runAt + 3000);
    await pollUntil(() => receiver.forTimer(id).length > 0, 10_000);
    await sleepUntil(Date.now() + 5000); // a second delivery would show up by now
    return { id, runAt };
  });

  unable = started(async () => {
    const id = await api.createEnabled({ app: APP, name: 'unable', cron: '* * * * * *', notifyHTTPParam: hook('unable') });
    if (!(await pollUntil(() => receiver.forTimer(id).length >= 3, 30_000))) {
      throw new Error(`timer ${id} was not delivered 3 times within 30 s of enable (got ${receiver.forTimer(id).length}): cannot test unable`);
    }
    await api.unable(APP, id);
    const unabledAt = Date.now();
    await sleepUntil(unabledAt + 7000);
    return { id, unabledAt, observedUntil: Date.now() };
  });

  deleted = started(async () => {
    const id = await api.createEnabled({ app: APP, name: 'delete', cron: '* * * * * *', notifyHTTPParam: hook('delete') });
    if (!(await pollUntil(() => receiver.forTimer(id).length >= 3, 30_000))) {
      throw new Error(`timer ${id} was not delivered 3 times within 30 s of enable (got ${receiver.forTimer(id).length}): cannot test delete`);
    }
    await api.deleteTimer(APP, id);
    const deletedAt = Date.now();
    const [{ n }] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ? AND status = 0', [id]);
    await sleepUntil(deletedAt + 7000);
    return { id, deletedAt, observedUntil: Date.now(), pendingAfterDelete: Number(n) };
  });

  failing = started(async () => {
    const runAt = Date.now() + 3000;
    const maxAttempts = 3;
    const backoffMs = 1000;
    const id = await api.createTimer({ app: APP, name: 'failing', runAt, notifyHTTPParam: hook('failing'), retryPolicy: { maxAttempts, backoffMs } });
    receiver.failTimer(id, 500);
    await api.enable(APP, id);
    await pollUntil(() => receiver.forTimer(id).length >= maxAttempts, 30_000);
    await pollUntil(async () => (await taskRows(id))[0]?.status === 3, 15_000);
    // (the test asserts what arrived; a shortfall shows there)
    await sleepUntil(Date.now() + 6000); // no further attempt may come
    return { id, runAt, maxAttempts, backoffMs };
  });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

describe('the firing pipeline over five role processes', () => {
  it('fires an every-second timer every second for 20 s: exact count, none early, p99 lateness < 200 ms', async () => {
    const { id, from, to } = await everySecond();
    const expected = periodicFireIds(id, from, to);
    const account = accountFires(inWindow(id, from, to), expected, [id]);
    const summary = describeAccount(account);
    expect(summary).toMatchObject({ expected: 20, delivered: 20, missingCount: 0, duplicateCount: 0, malformed: 0 });
    expect(receiver.forTimer(id).filter((d) => d.receivedAt < d.scheduledAt)).toEqual([]);
    expect(inWindow(id, from, to)).toHaveLength(20);
    const late = percentiles(account.lateness);
    process.stdout.write(`every-second lateness ms: ${JSON.stringify(late)} (window ${sec(from)}..${sec(to)})\n`);
    expect(late.p99).toBeLessThan(200);
    // The records agree: every fire of the window succeeded once, on its first attempt.
    const rows = await taskRows(id, from, to);
    expect(rows.map((r) => [Number(r.run_at), r.status, r.attempt])).toEqual(expected.map((f) => [Number(f.split('-')[1]), 2, 1]));
    const recs = await stack.api.records(APP, id, { status: 2, pageSize: 100 });
    const recIds = new Set(recs.data.map((r) => r.fireId));
    for (const f of expected) expect(recIds.has(f)).toBe(true);
  });

  it('fires a one-shot timer once', async () => {
    const { id, runAt } = await oneShot();
    const got = receiver.forTimer(id);
    expect(got.map((d) => ({ fireId: d.fireId, attempt: d.attempt, scheduledAt: d.scheduledAt, method: d.method, body: d.body }))).toEqual([
      { fireId: `${id}-${runAt}`, attempt: 1, scheduledAt: runAt, method: 'POST', body: '{"scenario":"one-shot"}' },
    ]);
    expect(got[0].receivedAt).toBeGreaterThanOrEqual(runAt);
    const recs = await stack.api.records(APP, id);
    expect(recs.total).toBe(1);
    expect(recs.data[0]).toMatchObject({ fireId: `${id}-${runAt}`, runAt, status: 2, attempt: 1, httpStatus: 200 });
  });

  it('stops firing within 2 s of unable', async () => {
    const { id, unabledAt, observedUntil } = await unable();
    const late = after(receiver.forTimer(id), unabledAt + 2000);
    expect(late.map((d) => `${d.fireId} received ${d.receivedAt - unabledAt} ms after unable`)).toEqual([]);
    expect(observedUntil - unabledAt).toBeGreaterThanOrEqual(7000);
    // Fires that came due after the 2 s were not delivered; none of them is recorded as succeeded.
    const rows = await taskRows(id, unabledAt + 2000, observedUntil);
    expect(rows.filter((r) => r.status === 2)).toEqual([]);
  });

  it('delete removes the pending fires and stops firing within 2 s', async () => {
    const { id, deletedAt, observedUntil, pendingAfterDelete } = await deleted();
    expect(pendingAfterDelete).toBe(0);
    const late = after(receiver.forTimer(id), deletedAt + 2000);
    expect(late.map((d) => `${d.fireId} received ${d.receivedAt - deletedAt} ms after delete`)).toEqual([]);
    expect(observedUntil - deletedAt).toBeGreaterThanOrEqual(7000);
    const [{ n }] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ? AND status IN (0, 1)', [id]);
    expect(Number(n)).toBe(0);
    // No index entry of the deleted timer is left in the Redis slice index.
    const r = stack.redis();
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await r.scan(cursor, 'MATCH', `${stack.keyPrefix}slice:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const left: string[] = [];
    for (const key of keys) {
      if ((await r.type(key)) !== 'zset') continue;
      const [, members] = await r.zscan(key, '0', 'MATCH', `${id}-*`, 'COUNT', 10_000);
      left.push(...members.filter((_, i) => i % 2 === 0));
    }
    expect(left.filter((m) => Number(m.split('-')[1]) > deletedAt + 2000)).toEqual([]);
  });

  it('retries a failing callback with backoff, then dead-letters and records it', async () => {
    const { id, runAt, maxAttempts, backoffMs } = await failing();
    const got = receiver.forTimer(id);
    const fid = `${id}-${runAt}`;
    expect(got.map((d) => [d.fireId, d.attempt, d.status])).toEqual([
      [fid, 1, 500],
      [fid, 2, 500],
      [fid, 3, 500],
    ]);
    const gaps = got.slice(1).map((d, i) => d.receivedAt - got[i].receivedAt);
    process.stdout.write(`failing callback: attempt gaps ${gaps.join(', ')} ms (backoff ${backoffMs} ms, doubling)\n`);
    // Exponential backoff with +/-20 % jitter: backoffMs, then 2 x backoffMs. The upper bounds allow the
    // broker's 100 ms delayed-delivery tick and a callback round trip on a loaded machine.
    expect(gaps[0]).toBeGreaterThanOrEqual(backoffMs * 0.8);
    expect(gaps[0]).toBeLessThanOrEqual(backoffMs * 1.2 + 600);
    expect(gaps[1]).toBeGreaterThanOrEqual(backoffMs * 2 * 0.8);
    expect(gaps[1]).toBeLessThanOrEqual(backoffMs * 2 * 1.2 + 600);
    expect(gaps[1]).toBeGreaterThan(gaps[0]);
    const recs = await stack.api.records(APP, id);
    expect(recs.total).toBe(1);
    expect(recs.data[0]).toMatchObject({ fireId: fid, status: 3, attempt: maxAttempts, httpStatus: 500 });
    expect(recs.data[0].error).toBeTruthy();
    // The fire is on the dead-letter topic.
    const dlq = await stack.examineMessages('timer-tasks-dlq', 5);
    expect(dlq.some((m) => m.includes(fid))).toBe(true);
  });
});
