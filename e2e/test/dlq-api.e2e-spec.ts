import { createHmac } from 'node:crypto';
import { ApiClient, Delivery, Receiver, Stack, TaskRecord, nextSecond, pollUntil, sleep } from '../support';

// Dead letters through the API and failure notifications over the built roles: a timer whose callback
// always fails (maxAttempts 2) ends in its app's DLQ list, invisible to another app; the failure
// webhook gets one signed notification per dead letter (a timer with its own failureWebhook: there,
// not the app's), and one for a fire missed late (misfirePolicy skip); a replay by fire id re-delivers
// exactly that fire once the receiver is fixed; purge empties the list and keeps the failed record.
jest.setTimeout(60_000);

const ADMIN = 'e2e-dlq-admin-token-0123456789abcdef';
const A = 'e2e-dlq-a';
const B = 'e2e-dlq-b';

let stack: Stack;
let receiver: Receiver;
let failing = true;

interface Letter {
  fireId: string;
  timerId: string;
  runAt: number;
  failedAt: number;
  attempts: number;
  reason: string;
  error: string | null;
  httpStatus: number | null;
}

/** The failure webhook's body (`FailureNotification` in libs/contracts): the fields this test reads. */
interface Notification {
  fireId: string;
  timerId: string;
  app: string;
  runAt: number;
  kind: string;
  event: string;
  reason: string;
  error: string | null;
  httpStatus: number | null;
  attempts: number;
}

/** `X-Timer-Signature: t=<ms>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, checked as a receiver would. */
function signedBy(secret: string, header: string, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  return m !== null && createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex') === m[2] && Math.abs(Date.now() - Number(m[1])) < 60_000;
}

beforeAll(async () => {
  receiver = await Receiver.start({ keepBodies: true });
  receiver.respond((d) => (d.path === '/hook' && failing ? { status: 500 } : undefined));
  stack = await Stack.start({ adminToken: ADMIN, env: { TIMER_WINDOW_MINUTES: '5' } });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

it('lists, notifies, replays exactly one fire and purges, for its own app only', async () => {
  const admin = stack.api;
  for (const app of [A, B]) await admin.call('POST', '/api/app/v1/apps', { app });
  const token = async (app: string) => (await admin.call<{ data: { token: string } }>('POST', '/api/app/v1/tokens', { app })).data.token;
  const a = new ApiClient(admin.baseUrl, await token(A));
  const b = new ApiClient(admin.baseUrl, await token(B));
  const secret = (await a.call<{ data: { secret: string } }>('POST', '/api/app/v1/secret', { app: A })).data.secret;
  await a.call('PUT', '/api/app/v1/failure-webhook', { app: A, failureWebhook: { url: receiver.url('/failures'), headers: { Authorization: 'Bearer hook' } } });

  const runAt = nextSecond(3_000);
  const timer = (name: string, failureWebhook?: { url: string; headers?: Record<string, string> }) =>
    a.createEnabled({ app: A, name, runAt, notifyHTTPParam: { url: receiver.url('/hook'), method: 'POST' }, retryPolicy: { maxAttempts: 2, backoffMs: 500 }, failureWebhook });
  const own = { url: receiver.url('/timer-failures'), headers: { 'X-Team': 'two' } };
  const [t1, t2] = await Promise.all([timer('dlq-one'), timer('dlq-two', own)]);
  const [f1, f2] = [`${t1}-${runAt}`, `${t2}-${runAt}`];
  expect((await a.getTimer(A, t2)).failureWebhook).toEqual({ url: own.url, headers: { 'X-Team': ['two'] } });

  // A fire left 45 s past due (as a downtime leaves it: a pending row the reconciler re-publishes) of a
  // misfirePolicy skip timer is recorded missed, late: its app's webhook is told.
  const late = nextSecond() - 45_000;
  const tm = await a.createEnabled({ app: A, name: 'dlq-missed', every: '1h', startAt: late, misfirePolicy: 'skip', notifyHTTPParam: { url: receiver.url('/ok'), method: 'POST' } });
  await stack.sql('INSERT IGNORE INTO tasks (app, timer_id, run_at) VALUES (?, ?, ?)', [A, tm, late]);
  const fm = `${tm}-${late}`;

  // Both fires fail twice and end in A's dead letters, newest run time first (same run time: by row).
  const list = (client: ApiClient, app: string) => client.call<{ data: Letter[]; total: number }>('GET', `/api/app/v1/dlq?app=${app}&pageSize=100`);
  const listed = await pollUntil(async () => ((await list(a, A)).total === 2 ? (await list(a, A)).data : undefined), 20_000);
  expect(listed?.map((l) => l.fireId).sort()).toEqual([f1, f2].sort());
  expect(listed?.find((l) => l.fireId === f1)).toMatchObject({ timerId: t1, runAt, attempts: 2, reason: 'attempts exhausted', error: 'HTTP 500', httpStatus: 500 });
  expect(receiver.forTimer(t1).map((d) => d.attempt)).toEqual([1, 2]);

  // Another app sees none of it.
  expect((await list(b, B)).total).toBe(0);
  await expect(list(b, A)).rejects.toMatchObject({ httpStatus: 403 });
  await expect(b.call('POST', '/api/app/v1/dlq/replay', { app: A, fireIds: [f1] })).rejects.toMatchObject({ httpStatus: 403 });

  // One signed notification per dead letter, t2's at its own webhook (with its header), and one for the missed fire.
  const posts = (path = '/failures') => receiver.deliveries.filter((d) => d.path === path);
  const notified = (ps: Delivery[]) => ps.flatMap((p) => (JSON.parse(p.body ?? '{}') as { notifications?: Notification[] }).notifications ?? []);
  await pollUntil(async () => (notified(posts()).length >= 2 && notified(posts('/timer-failures')).length >= 1) || undefined, 20_000);
  await sleep(1_500); // a duplicate would come within the notifier's 1 s batching
  expect(notified(posts()).map((n) => n.fireId).sort()).toEqual([f1, fm].sort());
  expect(notified(posts('/timer-failures')).map((n) => n.fireId)).toEqual([f2]);
  expect(posts('/timer-failures')[0].headers?.['x-team']).toBe('two');
  expect(notified(posts()).find((n) => n.fireId === f1)).toMatchObject({ timerId: t1, app: A, runAt, kind: 'dead_letter', event: 'dead-lettered', reason: 'attempts exhausted', error: 'HTTP 500', httpStatus: 500, attempts: 2 });
  expect(notified(posts()).find((n) => n.fireId === fm)).toMatchObject({ timerId: tm, app: A, runAt: late, kind: 'missed', event: 'missed', error: null, httpStatus: null, attempts: 0 });
  expect(notified(posts()).find((n) => n.fireId === fm)?.reason).toMatch(/^late by \d+ ms$/);
  expect(receiver.forTimer(tm)).toHaveLength(0);
  for (const p of [...posts(), ...posts('/timer-failures')]) {
    expect(p.method).toBe('POST');
    expect(signedBy(secret, p.signature ?? '', p.body ?? '')).toBe(true);
    expect(signedBy('not-the-secret', p.signature ?? '', p.body ?? '')).toBe(false);
  }

  // Fixed receiver: replay f1 only, once its one-shot timer is completed (its last fire settled); it
  // is delivered once more (attempt 1), f2 is not touched.
  expect(await pollUntil(async () => (await a.getTimer(A, t1)).status === 3, 10_000)).toBe(true);
  failing = false;
  const replay = await a.call<{ data: { replayed: number; fireIds: string[]; notFound: string[] } }>('POST', '/api/app/v1/dlq/replay', { app: A, fireIds: [f1] });
  expect(replay.data).toMatchObject({ replayed: 1, fireIds: [f1], notFound: [] });
  const record = async (fireId: string) => (await a.call<{ data: TaskRecord[] }>('GET', `/api/task/v1/records?app=${A}&fireID=${fireId}`)).data[0];
  let delivered = await record(f1);
  for (const deadline = Date.now() + 15_000; delivered.status !== 2 && Date.now() < deadline; delivered = await record(f1)) await sleep(250);
  expect(delivered).toMatchObject({ status: 2, attempt: 1, httpStatus: 200 });
  expect(delivered.attempts.map((x) => [x.attempt, x.httpStatus])).toEqual([[1, 500], [2, 500], [1, 200]]);
  await sleep(1_000);
  expect(receiver.forTimer(t1).map((d) => [d.attempt, d.status])).toEqual([[1, 500], [2, 500], [1, 200]]);
  expect(receiver.forTimer(t2)).toHaveLength(2);
  expect((await list(a, A)).data.map((l) => l.fireId)).toEqual([f2]);
  // A second replay of f1 finds no dead letter: nothing is sent twice.
  expect((await a.call<{ data: { replayed: number; notFound: string[] } }>('POST', '/api/app/v1/dlq/replay', { app: A, fireIds: [f1] })).data).toMatchObject({ replayed: 0, notFound: [f1] });

  // Purge: the list is empty, the failed record stays; no further notification came.
  expect((await a.call<{ data: { purged: number } }>('POST', '/api/app/v1/dlq/purge', { app: A, all: true })).data).toEqual({ purged: 1 });
  expect((await list(a, A)).total).toBe(0);
  expect(await record(f2)).toMatchObject({ status: 3, attempt: 2 });
  expect(notified(posts())).toHaveLength(2);
  expect(notified(posts('/timer-failures'))).toHaveLength(1);
  expect(receiver.forTimer(t1)).toHaveLength(3);
});
