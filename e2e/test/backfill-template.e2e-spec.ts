import { createHmac } from 'node:crypto';
import { ApiClient, Delivery, nextSecond, pollUntil, Receiver, sleep, Stack, TaskRecord } from '../support';

// Backfill and templated callbacks over the built roles. A backfill of the 60 past seconds of an
// every-second timer delivers exactly those 60 fires, once each, with X-Timer-Backfill: 1, and records
// them marked backfill; a repeat creates none. A templated timer gets every placeholder filled in its
// URL, header and body, signed over the filled body; a body with braces but no `template` arrives byte
// for byte.
jest.setTimeout(60_000);

const ADMIN = 'e2e-backfill-admin-token-0123456789abcdef';
const APP = 'e2e-bf';
const S = 1_000;

/** What a receiver checks (DESIGN.md, callback headers): `t=<ms>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
function signedOver(secret: string, header: string | undefined, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  return m !== null && createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex') === m[2];
}

let stack: Stack;
let receiver: Receiver;
let api: ApiClient;

beforeAll(async () => {
  receiver = await Receiver.start({ keepBodies: true });
  stack = await Stack.start({ adminToken: ADMIN });
  api = stack.api;
  await api.call('POST', '/api/app/v1/apps', { app: APP });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

test('a backfill of 60 past seconds delivers exactly those fires once each, with the header, recorded as backfill', async () => {
  // Anchored 61 s ago: the enable creates its fires from now on, so its past seconds have none.
  const from = Math.floor(Date.now() / S) * S - 61 * S;
  const to = from + 60 * S;
  const id = await api.createEnabled({ app: APP, name: 'backfilled', every: '1s', startAt: from, notifyHTTPParam: { url: receiver.url('/bf'), method: 'POST' } });
  const res = await api.call<{ data: { fires: number; created: number; existing: number; published: number } }>('POST', '/api/timer/v1/backfill', { id, app: APP, from: new Date(from).toISOString(), to });
  expect(res.data).toEqual({ fires: 60, created: 60, existing: 0, published: 60 });

  const expected = Array.from({ length: 60 }, (_, k) => `${id}-${from + k * S}`);
  const backfilled = () => receiver.forTimer(id).filter((d) => d.scheduledAt < to);
  await pollUntil(() => backfilled().length >= 60, 20_000);
  await sleep(1_500); // a duplicate would follow within this
  // Repeated: every instant has its fire now, none is created (or delivered) again.
  const again = await api.call<{ data: { created: number; existing: number } }>('POST', '/api/timer/v1/backfill', { id, app: APP, from, to });
  expect(again.data).toMatchObject({ created: 0, existing: 60 });
  await sleep(1_000);
  await api.unable(APP, id);
  expect(backfilled().map((d) => d.fireId).sort()).toEqual(expected.sort());
  expect(backfilled().every((d) => d.backfill && d.attempt === 1)).toBe(true);
  // Live fires (from the enable on) are ordinary ones.
  expect(receiver.forTimer(id).filter((d) => d.scheduledAt >= to).every((d) => !d.backfill)).toBe(true);

  const records = await pollUntil(async () => {
    const page = await api.call<{ data: (TaskRecord & { backfill: boolean })[]; total: number }>('GET', `/api/task/v1/records?app=${APP}&timerID=${id}&from=${from}&to=${to}&pageSize=100`);
    return page.data.every((r) => r.status === 2) && page.total === 60 ? page : undefined;
  }, 10_000);
  expect(records?.data.every((r) => r.backfill)).toBe(true);

});

test('a templated callback arrives with every placeholder filled and signed over the filled body; an untemplated body verbatim', async () => {
  const secret = (await api.call<{ data: { secret: string } }>('POST', '/api/app/v1/secret', { app: APP })).data.secret;
  const start = nextSecond(2_500);
  const body = '{"at":{{scheduledAt}},"iso":"{{scheduledAtIso}}","prev":"{{previousScheduledAt}}","fire":"{{fireId}}","attempt":{{attempt}},"timer":"{{timerId}}","app":"{{app}}"}';
  const verbatim = '{"at":"{{scheduledAt}}","raw":"{{nope}} é \\u00e9"}';
  const tpl = await api.createEnabled({
    app: APP,
    name: 'templated',
    every: '1s',
    startAt: start,
    maxFires: 2,
    notifyHTTPParam: { url: `${receiver.url('/tpl/{{app}}')}?at={{scheduledAtIso}}`, method: 'POST', header: { 'X-Fire': ['{{fireId}}/{{attempt}}'] }, body, template: true },
  });
  const plain = await api.createEnabled({ app: APP, name: 'verbatim', runAt: start, notifyHTTPParam: { url: receiver.url('/plain'), method: 'POST', body: verbatim } });
  await pollUntil(() => receiver.forTimer(tpl).length >= 2 && receiver.forTimer(plain).length >= 1, 15_000);

  const [first, second] = receiver.forTimer(tpl).sort((a, b) => a.scheduledAt - b.scheduledAt);
  const filled = (d: Delivery, prev: string) => {
    const iso = new Date(d.scheduledAt).toISOString();
    expect(d.path).toBe(`/tpl/${APP}?at=${encodeURIComponent(iso)}`);
    expect(d.headers?.['x-fire']).toBe(`${d.fireId}/1`);
    expect(JSON.parse(d.body ?? '')).toEqual({ at: d.scheduledAt, iso, prev, fire: d.fireId, attempt: 1, timer: tpl, app: APP });
    expect(signedOver(secret, d.signature, d.body ?? '')).toBe(true);
  };
  expect([first.scheduledAt, second.scheduledAt]).toEqual([start, start + S]);
  filled(first, ''); // the first fire has no previous one
  filled(second, String(start));

  const [p] = receiver.forTimer(plain);
  expect(p.body).toBe(verbatim);
  expect(signedOver(secret, p.signature, verbatim)).toBe(true);
});
