import { answerOf, Stack } from '../support';

// Quotas and admission end to end over the built api role: each refusal is a 4xx with the numbers in
// the message, and nothing is written (no timer, no fire).
jest.setTimeout(60_000);

const A = 'e2e-quota';
const B = 'e2e-quota-b';
const HOOK = { url: 'https://example.com/hook', method: 'POST' };
let stack: Stack;

beforeAll(async () => {
  // Short windows keep the pre-created fires small; a capacity of 2 fires/s is reached by two timers.
  // No migrator runs here, so the enable writes a whole coming minute itself (180 s) for the per-minute quota to count.
  stack = await Stack.start({ roles: ['api'], env: { TIMER_WINDOW_MINUTES: '5', TIMER_CAPACITY_FIRES_PER_SEC: '2', TIMER_PRECREATE_SECONDS: '180' } });
  for (const app of [A, B]) await stack.api.call('POST', '/api/app/v1/apps', { app });
});
afterAll(() => stack?.stop());

const written = async () => {
  const [t] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM timers');
  const [f] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM tasks');
  return { timers: Number(t.n), fires: Number(f.n) };
};
const refused = async (app: string, name: string, schedule: Record<string, string>) => {
  const before = await written();
  const answer = (await answerOf(stack.api.createTimer({ app, name, ...schedule, notifyHTTPParam: HOOK }))) as { status: number; body: { code: number; msg: string } };
  expect(await written()).toEqual(before);
  return answer;
};

it('answers 403 over maxTimers and minIntervalMs, 429 over maxFiresPerMinute and the capacity, writing nothing', async () => {
  await stack.api.call('PUT', '/api/app/v1/quota', { app: A, maxTimers: 1, maxFiresPerMinute: 40, minIntervalMs: 2_000 });
  await stack.api.createEnabled({ app: A, name: 'even', cron: '*/2 * * * * *', notifyHTTPParam: HOOK });

  const tooMany = await refused(A, 'second', { cron: '0 * * * *' });
  expect(tooMany).toMatchObject({ status: 403, body: { code: 40301, msg: `quota maxTimers of app ${A} is 1; the app has 1 timers: delete one or ask for a larger quota` } });

  await stack.api.call('PUT', '/api/app/v1/quota', { app: A, maxTimers: 5, maxFiresPerMinute: 40, minIntervalMs: 2_000 });
  const tooClose = await refused(A, 'close', { every: '1s' });
  expect(tooClose).toMatchObject({ status: 403, body: { code: 40301 } });
  expect(tooClose.body.msg).toMatch(new RegExp(`^quota minIntervalMs of app ${A} is 2000 ms; this schedule fires 1000 ms apart`));

  const tooFast = await refused(A, 'fast', { cron: '*/4 * * * * *' });
  expect(tooFast).toMatchObject({ status: 429, body: { code: 42902 } });
  expect(tooFast.body.msg).toMatch(new RegExp(`^quota maxFiresPerMinute of app ${A} is 40; its busiest coming minute \\(\\S+\\) would have 45 fires \\(30 scheduled \\+ 15 of this timer\\)$`));

  // B's timer on the even seconds fills them (capacity 2); one more there is refused, naming the second.
  await stack.api.createEnabled({ app: B, name: 'even', cron: '*/2 * * * * *', notifyHTTPParam: HOOK });
  const over = await refused(B, 'more', { cron: '*/4 * * * * *' });
  expect(over).toMatchObject({ status: 429, body: { code: 42903 } });
  expect(over.body.msg).toMatch(/^admission: the second \S+Z would have 3 fires \(2 scheduled \+ 1 of this timer\), over the capacity of 2 fires\/s/);
  // The odd seconds have room.
  await stack.api.createEnabled({ app: B, name: 'odd', cron: '1/2 * * * * *', notifyHTTPParam: HOOK });

  const from = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
  const load = await stack.api.call<{ data: { peak: { fires: number }; perSecond: number[] } }>('GET', `/api/app/v1/load?from=${from}&to=${from + 4_000}`);
  expect(load.data).toMatchObject({ peak: { at: from, fires: 2 }, perSecond: [2, 1, 2, 1] });
  const quota = await stack.api.call<{ data: { usage: { timers: number; firesPerMinute: number } } }>('GET', `/api/app/v1/quota?app=${A}`);
  expect(quota.data.usage).toMatchObject({ timers: 1, firesPerMinute: 30 });
});
