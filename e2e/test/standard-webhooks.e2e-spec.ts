import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Delivery, pollUntil, Receiver, sleepUntil, Stack } from '../support';

// Standard Webhooks signatures over the built roles, checked with the standardwebhooks library as a
// receiver would use it: a delivery verifies with the app's secret; during a rotation's overlap a
// receiver holding only the old secret still verifies, and one holding only the new one too; after
// the overlap only the new secret does. Secrets are sealed in MySQL under TIMER_SECRETS_KEY.
jest.setTimeout(120_000);

const APP = 'e2e-webhooks';
const BODY = '{"kind":"tick"}';
/** A short cache TTL: the executors see a rotation within a second. */
const ENV = { TIMER_EXECUTOR_CACHE_TTL_MS: '1000', TIMER_SECRETS_KEY: randomBytes(32).toString('base64'), TIMER_WINDOW_MINUTES: '5' };
const OVERLAP_S = 8;

let stack: Stack;
let receiver: Receiver;

interface Rotated {
  secret: string;
  previousSecretValidUntil: number | null;
}

const headersOf = (d: Delivery) => d.headers as Record<string, string>;
const verifies = (secret: string, d: Delivery): boolean => {
  try {
    new Webhook(secret).verify(d.body ?? '', headersOf(d));
    return true;
  } catch {
    return false;
  }
};
const signatures = (d: Delivery) => headersOf(d)['webhook-signature']?.split(' ').length ?? 0;

async function rotate(overlapSeconds: number): Promise<Rotated> {
  return (await stack.api.call<{ data: Rotated }>('POST', '/api/app/v1/secret', { app: APP, overlapSeconds })).data;
}

beforeAll(async () => {
  receiver = await Receiver.start({ keepBodies: true });
  stack = await Stack.start({ env: ENV });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

test('the standardwebhooks library verifies deliveries; a rotation overlaps both secrets, then only the new one signs', async () => {
  const id = await stack.api.createTimer({ app: APP, name: 'tick', cron: '* * * * * *', notifyHTTPParam: { url: receiver.url('/hook'), method: 'POST', body: BODY } });
  const first = await rotate(0);
  expect(first.secret).toMatch(/^whsec_/);
  expect(first.previousSecretValidUntil).toBeNull();
  await stack.api.enable(APP, id);
  const after = (t: number) => receiver.forTimer(id).filter((d) => d.receivedAt > t);

  // 1. Signed with the first secret; webhook-id is the fire id. Stored sealed, never in clear.
  const t1 = Date.now();
  expect(await pollUntil(() => after(t1).some((d) => verifies(first.secret, d)), 20_000)).toBe(true);
  const d1 = after(t1).find((d) => verifies(first.secret, d))!;
  expect(headersOf(d1)['webhook-id']).toBe(d1.fireId);
  expect(Math.abs(Number(headersOf(d1)['webhook-timestamp']) * 1000 - d1.receivedAt)).toBeLessThan(5_000);
  const [row] = await stack.sql<{ signing_secret: string }>('SELECT signing_secret FROM apps WHERE app = ?', [APP]);
  expect(row.signing_secret).toMatch(/^enc:v1:/);
  expect(row.signing_secret).not.toContain(first.secret.slice(6));

  // 2. Rotation with an overlap: once the executors see it, both secrets verify every delivery.
  const second = await rotate(OVERLAP_S);
  const until = second.previousSecretValidUntil!;
  expect(until).toBeGreaterThan(Date.now() + (OVERLAP_S - 2) * 1000);
  const t2 = Date.now();
  expect(await pollUntil(() => after(t2).some((d) => signatures(d) === 2), 10_000)).toBe(true);
  const seenAt = after(t2).find((d) => signatures(d) === 2)!.receivedAt;
  await sleepUntil(until - 1_000);
  const overlap = after(seenAt - 1).filter((d) => d.receivedAt < until - 1_000);
  expect(overlap.length).toBeGreaterThanOrEqual(3);
  for (const d of overlap) {
    expect({ fire: d.fireId, old: verifies(first.secret, d), new: verifies(second.secret, d) }).toEqual({ fire: d.fireId, old: true, new: true });
  }

  // 3. After the overlap, only the new secret verifies.
  const t3 = until + 500;
  await sleepUntil(t3 + 4_000);
  const later = after(t3);
  expect(later.length).toBeGreaterThanOrEqual(3);
  for (const d of later) {
    expect({ fire: d.fireId, old: verifies(first.secret, d), new: verifies(second.secret, d) }).toEqual({ fire: d.fireId, old: false, new: true });
  }
  await stack.api.unable(APP, id);
});
