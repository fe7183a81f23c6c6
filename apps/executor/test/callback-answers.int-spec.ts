/**
 * What the executor keeps of a callback's answer (each attempt's `response`) and the result webhook,
 * against real MariaDB, Redis and Pulsar and a local receiver (docs/callback-answers.md).
 */
import { Webhook } from 'standardwebhooks';
import { AppRepository, TaskStatus } from '@timer/dal';
import { eventually } from '@timer/testing';
import { ExecutorHarness, harnessWithReceiver, metricValue } from './executor-harness';

jest.setTimeout(90_000);

const settled = (h: ExecutorHarness, timerId: string, runAt: number, status: number = TaskStatus.Succeeded) =>
  eventually(`fire ${timerId}-${runAt} with status ${status}`, async () => {
    const t = await h.task(timerId, runAt);
    return t && t.status === status ? t : undefined;
  }, 30_000);

const storedAttempts = async (h: ExecutorHarness, timerId: string, runAt: number): Promise<unknown> => {
  const [row] = (await h.db.query('SELECT attempts FROM tasks WHERE timer_id = ? AND run_at = ?', [timerId, runAt])) as { attempts: string | null }[];
  return row.attempts === null ? null : JSON.parse(row.attempts);
};

describe('executor keeping answers (defaults: content-type, 4096 bytes)', () => {
  const { h, receiver } = harnessWithReceiver();

  it("keeps each attempt's status, content-type and body, a retried fire's as well as a first-attempt success's", async () => {
    const ok = await h.timer({ url: receiver.url('/answer-ok') });
    const runAt = Date.now();
    await h.row(ok.id, runAt);
    await h.publish(ok.id, runAt);
    const task = await settled(h, ok.id, runAt);
    expect(task!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, httpStatus: 200, response: { status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok', truncated: false } }),
    ]);

    receiver.respond('/answer-fail', 500);
    const failing = await h.timer({ url: receiver.url('/answer-fail'), maxAttempts: 2, backoffMs: 200 });
    await h.row(failing.id, runAt);
    await h.publish(failing.id, runAt);
    const failed = await settled(h, failing.id, runAt, TaskStatus.Failed);
    const answer = { status: 500, headers: { 'content-type': 'text/plain' }, body: 'failing on purpose', truncated: false };
    expect(failed!.attempts!.map((a) => [a.attempt, a.response])).toEqual([
      [1, answer],
      [2, answer],
    ]);
  });

  it('posts the final answer to the result webhook, signed with the app secret, without the fire waiting for it', async () => {
    const secret = await h.app.get(AppRepository).rotateSecret('app-it');
    const timer = await h.timer({ url: receiver.url('/answer-hooked'), resultWebhook: { url: receiver.url('/results'), headers: { 'X-Hook': ['h1'] } } });
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    await settled(h, timer.id, runAt);
    const post = await eventually('the result POST', async () => receiver.callsTo('/results').find((c) => c.body.includes(`"${timer.id}-${runAt}"`)), 15_000);
    expect(post.method).toBe('POST');
    expect(post.headers['x-hook']).toBe('h1');
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers['webhook-id']).toBe(`${timer.id}-${runAt}-result-1`);
    // Verified as a receiver would: the standardwebhooks library with the app's secret.
    const verified = new Webhook(secret).verify(post.body, post.headers as Record<string, string>);
    expect(verified).toEqual({
      fireId: `${timer.id}-${runAt}`,
      timerId: timer.id,
      runAt,
      attempt: 1,
      outcome: 'succeeded',
      status: 200,
      headers: { 'content-type': 'text/plain' },
      body: 'ok',
      truncated: false,
      error: null,
    });
    expect(await metricValue(h, 'timer_result_webhook_posts_total', { outcome: 'sent' })).toBeGreaterThanOrEqual(1);
  });

  it('posts only the final attempt of a retried fire, and a failing webhook changes nothing for the fire: retried, then given up and counted', async () => {
    receiver.respond('/answer-final', 503);
    receiver.respond('/results-down', 500);
    const timer = await h.timer({ url: receiver.url('/answer-final'), maxAttempts: 2, backoffMs: 200, resultWebhook: { url: receiver.url('/results-down') } });
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt, TaskStatus.Failed);
    expect(task).toMatchObject({ attempt: 2, httpStatus: 503 });
    const failedBefore = await metricValue(h, 'timer_result_webhook_posts_total', { outcome: 'failed' });
    await eventually('three tries of the result POST given up', async () => (await metricValue(h, 'timer_result_webhook_posts_total', { outcome: 'failed' })) > failedBefore || undefined, 15_000);
    const posts = receiver.callsTo('/results-down');
    expect(posts).toHaveLength(3);
    expect(posts.map((p) => JSON.parse(p.body) as { attempt: number; outcome: string; status: number })).toEqual(
      Array(3).fill(expect.objectContaining({ attempt: 2, outcome: 'failed', status: 503, body: 'failing on purpose' })),
    );
  });
});

describe('executor keeping no answers (TIMER_RECORD_HEADERS=none, TIMER_RECORD_BODY_BYTES=0)', () => {
  const { h, receiver } = harnessWithReceiver({ TIMER_RECORD_HEADERS: 'none', TIMER_RECORD_BODY_BYTES: '0' });

  it('writes a first-attempt success as before (no attempts JSON) and keeps no response', async () => {
    const timer = await h.timer({ url: receiver.url('/plain') });
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt);
    expect(await storedAttempts(h, timer.id, runAt)).toBeNull();
    expect(task!.attempts).toEqual([{ attempt: 1, startedAt: expect.any(Number), httpStatus: 200, costMs: expect.any(Number), error: null }]);
  });
});
