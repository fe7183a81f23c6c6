import { answerOf, pollUntil, Receiver, Stack } from '../support';

// POST def/batch end to end over the built roles: a batch with enable:true leaves each timer as a
// create + enable would (versions, fire rows, slice index entries) and its near fires are delivered;
// every refusal writes nothing (timers counted before and after).
jest.setTimeout(120_000);

const APP = 'e2e-batch';
const BATCH_MAX = 25;
let stack: Stack;
let receiver: Receiver;

const hook = () => ({ url: receiver.url('/batch'), method: 'POST' });
const hourly = (i: number) => ({ name: `hourly-${i}`, cron: `0 ${i % 60} * * * *`, notifyHTTPParam: hook() });

interface Created {
  id: number;
  version: number;
  enabled: boolean;
  fires: number;
}

/** The raw answer of a batch: status, body and the replay header. */
async function batch(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: { code: number; msg: string; data?: { timers: Created[] } }; replayed: boolean }> {
  const res = await fetch(`${stack.api.baseUrl}/api/timer/v1/def/batch`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { code: number; msg: string }, replayed: res.headers.get('idempotent-replayed') === 'true' };
}

const timers = async () => Number((await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM timers'))[0].n);

/** A refused batch: its answer, after checking that no timer was written. */
async function refused(body: unknown, headers: Record<string, string> = {}) {
  const before = await timers();
  const answer = await batch(body, headers);
  expect(await timers()).toBe(before);
  return answer;
}

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start({ env: { TIMER_WINDOW_MINUTES: '5', TIMER_API_BATCH_MAX: String(BATCH_MAX) } });
  await stack.api.call('POST', '/api/app/v1/apps', { app: APP });
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

it('creates and enables every timer as a create + enable would, and delivers their fires', async () => {
  const soon = Date.now() + 3_000;
  const items = [...Array.from({ length: 18 }, (_, i) => hourly(i)), { name: 'soon', runAt: soon, notifyHTTPParam: hook() }, { name: 'every-5s', cron: '*/5 * * * * *', notifyHTTPParam: hook() }];
  const answer = await batch({ app: APP, enable: true, timers: items });
  expect(answer.status).toBe(200);
  const created = answer.body.data?.timers ?? [];
  expect(created).toHaveLength(items.length);
  expect(created.every((t) => t.enabled && t.version === 2)).toBe(true);
  // The near future only (TIMER_PRECREATE_SECONDS, 60 s): an hourly cron may have no fire in it; these two have.
  expect(created[18].fires).toBe(1);
  expect(created[19].fires).toBeGreaterThanOrEqual(11);
  expect(created[19].fires).toBeLessThanOrEqual(12);
  const ids = created.map((t) => String(t.id));

  // Each as after a create then an enable: status enabled, versions create (1) and enable (2), next_fire_at set.
  const rows = await stack.sql<{ id: string; name: string; status: number; version: number; next_fire_at: string | null }>(
    `SELECT id, name, status, version, next_fire_at FROM timers WHERE id IN (${ids.map(() => '?').join(',')})`,
    ids,
  );
  expect(new Map(rows.map((r) => [String(r.id), r.name]))).toEqual(new Map(ids.map((id, i) => [id, items[i].name])));
  expect(rows.every((r) => Number(r.status) === 2 && Number(r.version) === 2)).toBe(true);
  // The one-shot's only fire is written: it has no fire after the near future.
  expect(rows.filter((r) => r.next_fire_at === null).map((r) => r.name)).toEqual(['soon']);
  const versions = await stack.api.versions(APP, ids[0]);
  expect(versions.data.map((v) => [v.version, v.change])).toEqual([
    [2, 'enable'],
    [1, 'create'],
  ]);

  // The fire rows answered, and the later ones in the slice index.
  const fires = await stack.sql<{ timer_id: string; n: number }>(`SELECT timer_id, COUNT(*) AS n FROM tasks WHERE timer_id IN (${ids.map(() => '?').join(',')}) GROUP BY timer_id`, ids);
  const stored = new Map(fires.map((f) => [String(f.timer_id), Number(f.n)]));
  expect(ids.map((id) => stored.get(id) ?? 0)).toEqual(created.map((t) => t.fires));
  const [first] = await stack.sql<{ run_at: string }>('SELECT MIN(run_at) AS run_at FROM tasks WHERE timer_id = ? AND run_at > ?', [ids[19], Date.now() + 10_000]);
  const minute = Math.floor(Number(first.run_at) / 60_000) * 60_000;
  const r = stack.redis();
  const keys = await r.keys(`${stack.keyPrefix}slice:${minute}:*`);
  const members: string[] = [];
  for (const k of keys) if ((await r.type(k)) === 'zset') members.push(...(await r.zrange(k, 0, -1)));
  expect(members).toContain(`${ids[19]}-${first.run_at}`);

  // The near-term one-shot (published after the commit) and the 5-second cron are delivered.
  await pollUntil(async () => receiver.forTimer(ids[18]).length > 0 && receiver.forTimer(ids[19]).length > 0, 30_000, 250);
  expect(receiver.forTimer(ids[18]).map((d) => d.scheduledAt)).toEqual([soon]);
});

it('refuses a bad item, a duplicate name, a taken name, an empty or oversized list, writing nothing', async () => {
  const bad = await refused({ app: APP, timers: [hourly(100), hourly(101), hourly(102), { ...hourly(103), cron: '61 * * * *' }] });
  expect(bad).toMatchObject({ status: 400, body: { code: 40001 } });
  expect(bad.body.msg).toMatch(/^timers\[3\]\.cron: /);

  const missing = await refused({ app: APP, timers: [hourly(110), { name: 'no-hook', cron: '0 * * * *' }] });
  expect(missing.status).toBe(400);
  expect(missing.body.msg).toMatch(/timers\[1\]\.notifyHTTPParam/);

  const duplicate = await refused({ app: APP, timers: [hourly(120), hourly(121), hourly(120)] });
  expect(duplicate).toMatchObject({ status: 400, body: { msg: 'timers[2].name: duplicate of timers[0] ("hourly-120")' } });

  await stack.api.createTimer({ app: APP, name: 'taken', cron: '0 * * * *', notifyHTTPParam: hook() });
  const taken = await refused({ app: APP, timers: [hourly(130), { ...hourly(131), name: 'taken' }] });
  expect(taken).toMatchObject({ status: 409, body: { code: 40900, msg: `timers[1].name: app ${APP} already has a timer named "taken"` } });

  const otherApp = await refused({ app: APP, timers: [{ ...hourly(140), app: 'another' }] });
  expect(otherApp).toMatchObject({ status: 400, body: { msg: 'timers[0].app: "another" is not the batch\'s app "e2e-batch" (leave it out)' } });

  const empty = await refused({ app: APP, timers: [] });
  expect(empty.status).toBe(400);
  expect(empty.body.msg).toMatch(/^timers /);
  const over = await refused({ app: APP, timers: Array.from({ length: BATCH_MAX + 1 }, (_, i) => hourly(200 + i)) });
  expect(over).toMatchObject({ status: 400, body: { msg: `timers: at most ${BATCH_MAX} timers per batch (TIMER_API_BATCH_MAX); got ${BATCH_MAX + 1}: send several batches` } });
});

it('counts the whole batch against maxTimers (403 with the numbers, nothing written)', async () => {
  const app = 'e2e-batch-quota';
  await stack.api.call('POST', '/api/app/v1/apps', { app });
  await stack.api.call('PUT', '/api/app/v1/quota', { app, maxTimers: 4 });
  await stack.api.createTimer({ app, name: 'one', cron: '0 * * * *', notifyHTTPParam: hook() });
  await stack.api.createTimer({ app, name: 'two', cron: '0 * * * *', notifyHTTPParam: hook() });
  const over = await refused({ app, enable: true, timers: [hourly(1), hourly(2), hourly(3)] });
  expect(over).toMatchObject({ status: 403, body: { code: 40301, msg: `quota maxTimers of app ${app} is 4; the app has 2 timers and this batch adds 3: delete one or ask for a larger quota` } });
  // Exactly up to the quota passes.
  expect((await batch({ app, timers: [hourly(1), hourly(2)] })).status).toBe(200);
});

it('answers a repeated Idempotency-Key with the first result, and 422 for another body', async () => {
  const body = { app: APP, enable: true, timers: [hourly(300), hourly(301)] };
  const headers = { 'idempotency-key': 'batch-key-1' };
  const first = await batch(body, headers);
  expect(first).toMatchObject({ status: 200, replayed: false });
  const again = await refused(body, headers);
  expect(again).toMatchObject({ status: 200, replayed: true, body: { data: first.body.data } });
  const other = await refused({ ...body, timers: [hourly(302)] }, headers);
  expect(other).toMatchObject({ status: 422, body: { code: 42200 } });
  // Without the key the same names are taken: 409.
  expect((await answerOf(stack.api.call('POST', '/api/timer/v1/def/batch', body))).status).toBe(409);
});
