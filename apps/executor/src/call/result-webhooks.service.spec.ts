import { Registry } from 'prom-client';
import type { CallbackClient, CallbackResult } from '@timer/callback';
import type { TaskMessage } from '@timer/contracts';
import type { MetricsService } from '@timer/platform';
import { FakeCallback, FakeClock } from '../../test/fakes';
import { RESULT_WEBHOOK_IN_FLIGHT_MAX, ResultWebhooks } from './result-webhooks.service';

describe('ResultWebhooks', () => {
  const msg: TaskMessage = { timerId: '7', runAt: 1_000, fireId: '7-1000', attempt: 2 };
  const answered: CallbackResult = { ok: true, status: 201, costMs: 4, retryable: false, response: { status: 201, headers: { 'content-type': 'text/plain' }, body: 'done', truncated: false } };
  const hook = { url: 'https://hooks.example/r', headers: { 'X-Key': ['k'] } };
  let callback: FakeCallback;
  let clock: FakeClock;
  let registry: Registry;
  let results: ResultWebhooks;

  beforeEach(() => {
    callback = new FakeCallback();
    clock = new FakeClock(0);
    registry = new Registry();
    results = new ResultWebhooks(callback as unknown as CallbackClient, { registry } as MetricsService, clock);
  });
  const posts = async (outcome: string) => (await registry.getSingleMetric('timer_result_webhook_posts_total')!.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  // The fake clock's sleeps resolve at once: every post ends within a few turns of the loop.
  const settle = async () => {
    while (results.pending > 0) await new Promise((resolve) => setImmediate(resolve));
  };

  it("posts the answer as JSON with the webhook's headers, signed with the app's secrets under its own webhook-id", async () => {
    results.notify(hook, msg, 'succeeded', answered, ['new', 'old']);
    await settle();
    expect(callback.calls).toHaveLength(1);
    const { req, fire, secret } = callback.calls[0];
    expect(req).toMatchObject({ url: hook.url, method: 'POST', header: { 'content-type': ['application/json'], 'X-Key': ['k'] } });
    expect(JSON.parse(req.body!)).toEqual({
      fireId: '7-1000',
      timerId: '7',
      runAt: 1_000,
      attempt: 2,
      outcome: 'succeeded',
      status: 201,
      headers: { 'content-type': 'text/plain' },
      body: 'done',
      truncated: false,
      error: null,
    });
    expect(fire).toEqual({ timerId: '7', runAt: 1_000, attempt: 2, messageId: '7-1000-result-2' });
    expect(secret).toEqual(['new', 'old']);
    expect(await posts('sent')).toBe(1);
  });

  it('posts an attempt that got no answer with a null status and its error', async () => {
    results.notify(hook, msg, 'failed', { ok: false, costMs: 5_000, retryable: true, error: 'no answer within 5000 ms' }, undefined);
    await settle();
    expect(JSON.parse(callback.calls[0].req.body!)).toMatchObject({ outcome: 'failed', status: null, headers: {}, body: '', truncated: false, error: 'no answer within 5000 ms' });
  });

  it('tries three times, 1 s then 2 s apart, when the webhook fails in a way worth retrying, then gives up', async () => {
    callback.fallback = { ok: false, status: 503, costMs: 1, retryable: true, error: 'HTTP 503' };
    results.notify(hook, msg, 'succeeded', answered, undefined);
    await settle();
    expect(callback.calls).toHaveLength(3);
    expect(clock.sleeps).toEqual([1_000, 2_000]);
    expect([await posts('retried'), await posts('failed'), await posts('sent')]).toEqual([2, 1, 0]);
  });

  it('does not retry a failure that will not heal (a 4xx, a refused address)', async () => {
    callback.fallback = { ok: false, status: 404, costMs: 1, retryable: false, error: 'HTTP 404' };
    results.notify(hook, msg, 'succeeded', answered, undefined);
    await settle();
    expect(callback.calls).toHaveLength(1);
    expect(await posts('failed')).toBe(1);
  });

  it('posts nothing without a webhook, and drops (counted) what comes while the maximum is in flight', async () => {
    results.notify(null, msg, 'succeeded', answered, undefined);
    expect(results.pending).toBe(0);
    const never = new Promise<CallbackResult>(() => undefined);
    jest.spyOn(callback, 'deliver').mockReturnValue(never);
    for (let i = 0; i <= RESULT_WEBHOOK_IN_FLIGHT_MAX; i++) results.notify(hook, msg, 'succeeded', answered, undefined);
    expect(results.pending).toBe(RESULT_WEBHOOK_IN_FLIGHT_MAX);
    expect(await posts('dropped')).toBe(1);
  });
});
