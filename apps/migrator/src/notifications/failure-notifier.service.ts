import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { FAILURE_NOTIFICATIONS_PER_POST, FailureNotification, FailureNotificationKind, MESSAGE_PROPERTIES, TaskMessage } from '@timer/contracts';
import { DeadLetterRepository, FailureTarget } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { FailureNotifierMetrics } from './failure-notifier.metrics';
import { WebhookPoster } from './webhook-poster';

/** How the notifier batches, paces and retries (constants in production; short in tests). */
export interface NotifierTiming {
  /** A dead letter waits at most this long for others of its batch. */
  flushMs: number;
  /** Pauses between the tries of one POST; after the last, the dead letters go back to the broker. */
  retryDelaysMs: readonly number[];
  /** Least time between two POSTs to one app's webhook (its rate limit). */
  minPostIntervalMs: number;
  /** A dead letter still undeliverable this long after it was dead-lettered is dropped (counted, logged). */
  maxAgeMs: number;
}

export const NOTIFIER_TIMING = Symbol('NOTIFIER_TIMING');

export const DEFAULT_NOTIFIER_TIMING: NotifierTiming = {
  flushMs: 1_000,
  retryDelaysMs: [1_000, 2_000, 4_000],
  minPostIntervalMs: 200,
  maxAgeMs: 24 * 3_600_000,
};

/** One dead letter as it came from `timer-tasks-dlq`, or one missed fire from `timer-fires-missed`. */
export interface DeadLetterMessage {
  task: TaskMessage;
  properties: Record<string, string>;
  /** When the executor dead-lettered it or recorded it missed (the message's publish time, epoch ms). */
  publishTime: number;
  kind: FailureNotificationKind;
}

interface Waiting extends DeadLetterMessage {
  resolve(): void;
  reject(e: Error): void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Failure notifications (docs/behaviour.md, "Failure notifications"): each dead letter consumed from
 * `timer-tasks-dlq` and each missed fire from `timer-fires-missed` (subscription `failure-notifier`)
 * is POSTed to its timer's failure webhook, else its app's, up to
 * 100 in one signed POST gathered within `flushMs`, at most one POST per app at a time and
 * `minPostIntervalMs` apart, retried after each of `retryDelaysMs`. `notify` resolves once the letter
 * is delivered or needs no delivery (the message is then acked) and rejects when the tries ran out
 * (nacked: the broker hands it back later), so nothing is lost when the process dies.
 */
@Injectable()
export class FailureNotifier implements BeforeApplicationShutdown {
  private readonly logger = new Logger(FailureNotifier.name);
  private queue: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly lastPost = new Map<string, number>();

  constructor(
    private readonly letters: DeadLetterRepository,
    private readonly poster: WebhookPoster,
    private readonly metrics: FailureNotifierMetrics,
    @Inject(CLOCK) private readonly clock: NowClock,
    @Inject(NOTIFIER_TIMING) private readonly timing: NotifierTiming,
  ) {}

  notify(letter: DeadLetterMessage): Promise<void> {
    if (this.clock.now() - letter.publishTime > this.timing.maxAgeMs) {
      this.metrics.notifications.inc({ outcome: 'expired' });
      this.logger.warn(`fire ${letter.task.fireId}: failure notification undeliverable for ${this.timing.maxAgeMs} ms; dropped`);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ ...letter, resolve, reject });
      if (this.queue.length >= FAILURE_NOTIFICATIONS_PER_POST) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.timing.flushMs);
    });
  }

  beforeApplicationShutdown(): void {
    this.flush();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    this.deliver(batch).catch((e: Error) => {
      this.logger.warn(`failure notifications: ${e.message}; ${batch.length} dead letters handed back`);
      for (const w of batch) w.reject(e);
    });
  }

  private async deliver(batch: Waiting[]): Promise<void> {
    const targets = await this.letters.targetsOf(batch.map((w) => w.task));
    // One group per app and webhook (a timer's own or its app's); one lane, so one rate limit, per app.
    const byApp = new Map<string, { target: FailureTarget; waiting: Waiting[] }>();
    for (const w of batch) {
      const target = targets.get(w.task.fireId);
      if (!target?.webhook) {
        this.metrics.notifications.inc({ outcome: 'no_webhook' });
        w.resolve();
        continue;
      }
      const key = `${target.app}\n${JSON.stringify(target.webhook)}`;
      const group = byApp.get(key) ?? { target, waiting: [] };
      group.waiting.push(w);
      byApp.set(key, group);
    }
    await Promise.all([...byApp.values()].map(({ target, waiting }) => this.inLane(target.app, () => this.send(target, waiting))));
  }

  /** One POST at a time per app, in arrival order. */
  private inLane(app: string, fn: () => Promise<void>): Promise<void> {
    const next = (this.lanes.get(app) ?? Promise.resolve()).then(fn);
    const settled = next.catch(() => undefined);
    this.lanes.set(app, settled);
    void settled.then(() => {
      if (this.lanes.get(app) === settled) this.lanes.delete(app);
    });
    return next;
  }

  private async send(target: FailureTarget, waiting: Waiting[]): Promise<void> {
    for (let i = 0; i < waiting.length; i += FAILURE_NOTIFICATIONS_PER_POST) {
      const chunk = waiting.slice(i, i + FAILURE_NOTIFICATIONS_PER_POST);
      const body = JSON.stringify({ notifications: chunk.map((w) => notificationOf(target.app, w)) });
      await this.post(target, chunk, body);
    }
  }

  /** Tries one POST under the app's rate limit; settles the chunk's dead letters with the outcome. */
  private async post(target: FailureTarget, chunk: Waiting[], body: string): Promise<void> {
    const webhook = target.webhook!;
    for (let attempt = 0; ; attempt++) {
      // Checked again after each sleep: a timer may wake a millisecond before Date.now() says it is due.
      const due = (this.lastPost.get(target.app) ?? 0) + this.timing.minPostIntervalMs;
      while (due > Date.now()) await sleep(due - Date.now());
      this.lastPost.set(target.app, Date.now());
      const result = await this.poster.post(webhook, body, target.signingSecret);
      this.metrics.posts.inc({ outcome: result.ok ? 'ok' : 'failed' });
      if (result.ok) {
        this.metrics.notifications.inc({ outcome: 'sent' }, chunk.length);
        for (const w of chunk) w.resolve();
        return;
      }
      if (!result.retryable) {
        this.metrics.notifications.inc({ outcome: 'refused' }, chunk.length);
        this.logger.warn(`failure webhook of app ${target.app} refused (${result.error}); ${chunk.length} notifications dropped`);
        for (const w of chunk) w.resolve();
        return;
      }
      if (attempt >= this.timing.retryDelaysMs.length) {
        this.metrics.notifications.inc({ outcome: 'retried' }, chunk.length);
        this.logger.warn(`failure webhook of app ${target.app} failed ${attempt + 1} times (${result.error}); ${chunk.length} notifications handed back to the broker`);
        const error = new Error(`failure webhook of app ${target.app}: ${result.error}`);
        for (const w of chunk) w.reject(error);
        return;
      }
      await sleep(this.timing.retryDelaysMs[attempt]);
    }
  }
}

/** The wire form of one dead letter or missed fire (libs/contracts `FailureNotification`). */
export function notificationOf(app: string, { task, properties, publishTime, kind }: DeadLetterMessage): FailureNotification {
  const common = { fireId: task.fireId, timerId: task.timerId, app, runAt: task.runAt, failedAt: publishTime };
  if (kind === 'missed') {
    return { ...common, kind, event: 'missed', reason: properties[MESSAGE_PROPERTIES.reason] || 'late', error: null, httpStatus: null, attempts: 0 };
  }
  const status = Number(properties[MESSAGE_PROPERTIES.httpStatus]);
  const attempts = Number(properties[MESSAGE_PROPERTIES.attempts]);
  return {
    ...common,
    kind,
    event: 'dead-lettered',
    reason: properties[MESSAGE_PROPERTIES.reason] || 'attempts exhausted',
    error: properties[MESSAGE_PROPERTIES.error] || null,
    httpStatus: Number.isInteger(status) && status > 0 ? status : null,
    attempts: Number.isInteger(attempts) && attempts > 0 ? attempts : task.attempt,
  };
}
