import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { answerOf, pollUntil, Receiver, Stack } from '../support';

// The receiver's answer over the built roles: a record shows the status, the headers
// TIMER_RECORD_HEADERS names and the first TIMER_RECORD_BODY_BYTES of the body; the timer's
// resultWebhook receives that answer, verified with the standardwebhooks library as a receiver would.
jest.setTimeout(120_000);

const APP = 'e2e-answers';
/** A short cache TTL: the executors see the app's new secret within a second. */
const ENV = { TIMER_EXECUTOR_CACHE_TTL_MS: '1000', TIMER_RECORD_HEADERS: 'Content-Type, X-Request-Id', TIMER_RECORD_BODY_BYTES: '16', TIMER_SECRETS_KEY: randomBytes(32).toString('base64') };
const ANSWER = '{"job":"done","rows":1234567}';

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await Receiver.start({ keepBodies: true });
  receiver.respond((d) => (d.path === '/job' ? { status: 201, body: ANSWER, headers: { 'content-type': 'application/json', 'x-request-id': 'req-7', 'x-not-kept': 'n' } } : undefined));
  stack = await Stack.start({ env: ENV });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

test("a record keeps the receiver's status, configured headers and body excerpt; the result webhook receives the answer, signed", async () => {
  const runAt = Date.now() + 6_000;
  const id = await stack.api.createTimer({
    app: APP,
    name: 'job',
    runAt,
    notifyHTTPParam: { url: receiver.url('/job'), method: 'POST', body: '{}' },
    resultWebhook: { url: receiver.url('/results'), headers: { 'X-Hook-Key': 'k1' } },
  });
  // The app exists once it has a timer; its secret signs callbacks and result webhooks alike.
  const { secret } = (await stack.api.call<{ data: { secret: string } }>('POST', '/api/app/v1/secret', { app: APP, overlapSeconds: 0 })).data;
  expect(await stack.api.getTimer(APP, id)).toMatchObject({ resultWebhook: { url: receiver.url('/results'), headers: { 'X-Hook-Key': ['k1'] } } });
  await stack.api.enable(APP, id);

  const kept = { status: 201, headers: { 'content-type': 'application/json', 'x-request-id': 'req-7' }, body: ANSWER.slice(0, 16), truncated: true };
  expect(await pollUntil(async () => (await stack.api.records(APP, id)).data[0]?.status === 2, 30_000)).toBe(true);
  const [record] = (await stack.api.records(APP, id)).data;
  expect(record.attempts).toEqual([expect.objectContaining({ attempt: 1, httpStatus: 201, response: kept })]);

  expect(await pollUntil(() => receiver.deliveries.some((d) => d.path === '/results'), 15_000)).toBe(true);
  const post = receiver.deliveries.find((d) => d.path === '/results')!;
  expect(post.headers!['x-hook-key']).toBe('k1');
  const fireId = `${id}-${runAt}`;
  expect(new Webhook(secret).verify(post.body!, post.headers as Record<string, string>)).toEqual({
    fireId,
    timerId: id,
    runAt,
    attempt: 1,
    outcome: 'succeeded',
    ...kept,
    error: null,
  });
  expect(() => new Webhook(`whsec_${randomBytes(24).toString('base64')}`).verify(post.body!, post.headers as Record<string, string>)).toThrow();
});

test('a result webhook is validated like the callback URL: 400 naming the field, nothing written', async () => {
  const before = (await stack.api.call<{ total: number }>('GET', `/api/timer/v1/defs?app=${APP}`)).total;
  const bad = await answerOf(
    stack.api.createTimer({ app: APP, name: 'bad', cron: '* * * * *', notifyHTTPParam: { url: receiver.url('/job'), method: 'POST' }, resultWebhook: { url: 'ftp://hooks.example/r' } }),
  );
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body)).toContain('resultWebhook.url');
  expect((await stack.api.call<{ total: number }>('GET', `/api/timer/v1/defs?app=${APP}`)).total).toBe(before);
});
