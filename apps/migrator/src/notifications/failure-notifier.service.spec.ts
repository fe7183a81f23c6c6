import { FailureNotification, MESSAGE_PROPERTIES } from '@timer/contracts';
import { DeadLetterRepository, FailureTarget, FailureWebhook } from '@timer/dal';
import { Registry } from 'prom-client';
import { FailureNotifierMetrics } from './failure-notifier.metrics';
import { DeadLetterMessage, FailureNotifier, NotifierTiming } from './failure-notifier.service';
import { PostResult, WebhookPoster } from './webhook-poster';

const NOW = 1_767_225_600_000;
const HOOK: FailureWebhook = { url: 'https://hooks.example.com/failures' };
const TIMING: NotifierTiming = { flushMs: 20, retryDelaysMs: [5, 5], minPostIntervalMs: 10, maxAgeMs: 60_000 };

class FakePoster extends WebhookPoster {
  readonly posts: { url: string; body: { notifications: FailureNotification[] }; secret: string | null; at: number }[] = [];
  inFlight = 0;
  maxInFlight = 0;
  answers: PostResult[] = [];

  async post(w: FailureWebhook, body: string, secret: string | null): Promise<PostResult> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.posts.push({ url: w.url, body: JSON.parse(body) as { notifications: FailureNotification[] }, secret, at: Date.now() });
    await new Promise((r) => setTimeout(r, 2));
    this.inFlight--;
    return this.answers.shift() ?? { ok: true, status: 204 };
  }
}

function letter(timerId: string, runAt: number, publishTime = NOW): DeadLetterMessage {
  return {
    task: { timerId, runAt, fireId: `${timerId}-${runAt}`, attempt: 3 },
    properties: { [MESSAGE_PROPERTIES.error]: 'HTTP 500', [MESSAGE_PROPERTIES.httpStatus]: '500', [MESSAGE_PROPERTIES.attempts]: '3', [MESSAGE_PROPERTIES.reason]: 'attempts exhausted' },
    publishTime,
    kind: 'dead_letter',
  };
}

function missed(timerId: string, runAt: number): DeadLetterMessage {
  return { task: { timerId, runAt, fireId: `${timerId}-${runAt}`, attempt: 1 }, properties: { [MESSAGE_PROPERTIES.reason]: 'late by 61000 ms' }, publishTime: NOW, kind: 'missed' };
}

function setup(targets: Record<string, FailureTarget>) {
  const poster = new FakePoster();
  const letters = {
    targetsOf: jest.fn(async (fires: { timerId: string; runAt: number }[]) => {
      const out = new Map<string, FailureTarget>();
      for (const f of fires) if (targets[f.timerId]) out.set(`${f.timerId}-${f.runAt}`, targets[f.timerId]);
      return out;
    }),
  } as unknown as DeadLetterRepository;
  const metrics = new FailureNotifierMetrics(new Registry());
  const notifier = new FailureNotifier(letters, poster, metrics, { now: () => NOW }, TIMING);
  const count = async (outcome: string) => (await metrics.notifications.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  return { poster, notifier, count, letters };
}

describe('FailureNotifier', () => {
  const alpha: FailureTarget = { app: 'alpha', webhook: HOOK, signingSecret: 's3cret' };

  it('gathers the dead letters of a moment into one signed POST carrying fire, timer, app, reason and last error', async () => {
    const { poster, notifier, count } = setup({ '1': alpha, '2': alpha });
    await Promise.all([notifier.notify(letter('1', 1000)), notifier.notify(letter('2', 2000, NOW - 5))]);
    expect(poster.posts).toHaveLength(1);
    expect(poster.posts[0].secret).toBe('s3cret');
    expect(poster.posts[0].body.notifications).toEqual([
      { fireId: '1-1000', timerId: '1', app: 'alpha', runAt: 1000, kind: 'dead_letter', event: 'dead-lettered', reason: 'attempts exhausted', error: 'HTTP 500', httpStatus: 500, attempts: 3, failedAt: NOW },
      expect.objectContaining({ fireId: '2-2000', failedAt: NOW - 5 }),
    ]);
    expect(await count('sent')).toBe(2);
  });

  it('sends at most 100 a POST, one POST at a time per app, spaced by the rate limit', async () => {
    const { poster, notifier } = setup({ '1': alpha });
    await Promise.all(Array.from({ length: 250 }, (_, i) => notifier.notify(letter('1', i + 1))));
    expect(poster.posts.map((p) => p.body.notifications.length)).toEqual([100, 100, 50]);
    expect(poster.maxInFlight).toBe(1);
    for (let i = 1; i < poster.posts.length; i++) expect(poster.posts[i].at - poster.posts[i - 1].at).toBeGreaterThanOrEqual(TIMING.minPostIntervalMs - 1);
    expect(new Set(poster.posts.flatMap((p) => p.body.notifications.map((n) => n.fireId))).size).toBe(250);
  });

  it('acks without a POST the dead letters of apps without a webhook, and of fires with no row', async () => {
    const { poster, notifier, count } = setup({ '1': { app: 'quiet', webhook: null, signingSecret: null } });
    await Promise.all([notifier.notify(letter('1', 1)), notifier.notify(letter('9', 1))]);
    expect(poster.posts).toHaveLength(0);
    expect(await count('no_webhook')).toBe(2);
  });

  it('retries a failing webhook after each delay, then hands the letters back (the promise rejects: nack)', async () => {
    const { poster, notifier, count } = setup({ '1': alpha });
    poster.answers = [{ ok: false, retryable: true, error: 'HTTP 503' }, { ok: false, retryable: true, error: 'HTTP 503' }, { ok: false, retryable: true, error: 'HTTP 503' }];
    await expect(notifier.notify(letter('1', 1))).rejects.toThrow(/HTTP 503/);
    expect(poster.posts).toHaveLength(3);
    expect(await count('retried')).toBe(1);
  });

  it('succeeds on a retry: delivered once, acked', async () => {
    const { poster, notifier, count } = setup({ '1': alpha });
    poster.answers = [{ ok: false, retryable: true, error: 'timeout' }];
    await notifier.notify(letter('1', 1));
    expect(poster.posts).toHaveLength(2);
    expect(await count('sent')).toBe(1);
  });

  it('drops without retrying a webhook the address policy refuses, and letters older than maxAgeMs', async () => {
    const { poster, notifier, count } = setup({ '1': alpha });
    poster.answers = [{ ok: false, retryable: false, error: 'private address' }];
    await notifier.notify(letter('1', 1));
    expect(poster.posts).toHaveLength(1);
    expect(await count('refused')).toBe(1);
    await notifier.notify(letter('1', 2, NOW - TIMING.maxAgeMs - 1));
    expect(poster.posts).toHaveLength(1);
    expect(await count('expired')).toBe(1);
  });

  it('notifies a missed fire in the same batch as dead letters, with its reason and no attempt', async () => {
    const { poster, notifier } = setup({ '1': alpha, '2': alpha });
    await Promise.all([notifier.notify(letter('1', 1000)), notifier.notify(missed('2', 2000))]);
    expect(poster.posts).toHaveLength(1);
    expect(poster.posts[0].body.notifications[1]).toEqual({
      fireId: '2-2000', timerId: '2', app: 'alpha', runAt: 2000, kind: 'missed', event: 'missed', reason: 'late by 61000 ms', error: null, httpStatus: null, attempts: 0, failedAt: NOW,
    });
  });

  it("posts a timer's letters to its own webhook and the others' to the app's, one POST at a time for the app, signed with the app's secret", async () => {
    const own: FailureTarget = { ...alpha, webhook: { url: 'https://hooks.example.com/timer-2' } };
    const { poster, notifier } = setup({ '1': alpha, '2': own, '3': alpha });
    await Promise.all([notifier.notify(letter('1', 1)), notifier.notify(letter('2', 1)), notifier.notify(letter('3', 1))]);
    expect(poster.posts.map((p) => [p.url, p.body.notifications.map((n) => n.timerId)])).toEqual([
      [HOOK.url, ['1', '3']],
      ['https://hooks.example.com/timer-2', ['2']],
    ]);
    expect(poster.posts.every((p) => p.secret === 's3cret')).toBe(true);
    expect(poster.maxInFlight).toBe(1);
  });

  it('hands a batch back when the lookup fails', async () => {
    const { notifier, letters } = setup({ '1': alpha });
    (letters.targetsOf as jest.Mock).mockRejectedValueOnce(new Error('MySQL down'));
    await expect(notifier.notify(letter('1', 1))).rejects.toThrow(/MySQL down/);
  });
});
