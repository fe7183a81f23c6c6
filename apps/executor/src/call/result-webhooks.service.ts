import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { Counter } from 'prom-client';
import { CallbackClient, CallbackResult } from '@timer/callback';
import { TaskMessage } from '@timer/contracts';
import { FailureWebhook } from '@timer/dal';
import { Clock, CLOCK, MetricsService } from '@timer/platform';

/** POSTs of one answer: the first and two retries, 1 s then 2 s after a failure worth retrying. */
export const RESULT_WEBHOOK_ATTEMPTS = 3;
/** Answers being posted at once per executor; one more is dropped (counted), so a slow webhook cannot hold memory. */
export const RESULT_WEBHOOK_IN_FLIGHT_MAX = 1_000;
/** How long shutdown waits for answers still being posted. */
const SHUTDOWN_WAIT_MS = 2_000;

/** The body POSTed to a result webhook (docs/callback-answers.md). */
export interface ResultNotification {
  fireId: string;
  timerId: string;
  runAt: number;
  attempt: number;
  outcome: 'succeeded' | 'failed';
  /** Null when no answer came (timeout, refused connection): `error` says why. */
  status: number | null;
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
  error: string | null;
}

export type ResultPostOutcome = 'sent' | 'retried' | 'failed' | 'dropped';

/**
 * Sends each final answer of a timer's callback to its `resultWebhook`, after the fire's outcome is
 * recorded and without the fire waiting: best effort, a bounded retry, failures counted and logged.
 * Signed as the callback is (the app's secrets, X-Timer-* headers), with its own `webhook-id`.
 */
@Injectable()
export class ResultWebhooks implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ResultWebhooks.name);
  private readonly posts: Counter<'outcome'>;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly callback: CallbackClient,
    metrics: MetricsService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.posts = new Counter({
      name: 'timer_result_webhook_posts_total',
      help: "POSTs of callbacks' final answers to result webhooks: sent (2xx), retried, failed (given up), dropped (too many in flight)",
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
  }

  /** Starts posting `result` when the timer has a result webhook; returns at once. */
  notify(webhook: FailureWebhook | null | undefined, msg: TaskMessage, outcome: 'succeeded' | 'failed', result: CallbackResult, secrets: string | string[] | undefined): void {
    if (!webhook) return;
    if (this.inFlight.size >= RESULT_WEBHOOK_IN_FLIGHT_MAX) {
      this.posts.inc({ outcome: 'dropped' });
      this.logger.warn(`result of fire ${msg.fireId} attempt ${msg.attempt} not posted: ${RESULT_WEBHOOK_IN_FLIGHT_MAX} results in flight`);
      return;
    }
    const r = result.response;
    const note: ResultNotification = {
      fireId: msg.fireId,
      timerId: msg.timerId,
      runAt: msg.runAt,
      attempt: msg.attempt,
      outcome,
      status: result.status ?? null,
      headers: r?.headers ?? {},
      body: r?.body ?? '',
      truncated: r?.truncated ?? false,
      error: result.error ?? null,
    };
    const p = this.post(webhook, msg, note, secrets).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** Answers being posted now. */
  get pending(): number {
    return this.inFlight.size;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.inFlight.size === 0) return;
    await Promise.race([Promise.allSettled([...this.inFlight]), this.clock.sleep(SHUTDOWN_WAIT_MS)]);
  }

  private async post(webhook: FailureWebhook, msg: TaskMessage, note: ResultNotification, secrets: string | string[] | undefined): Promise<void> {
    const header: Record<string, string[]> = { 'content-type': ['application/json'] };
    for (const [name, value] of Object.entries(webhook.headers ?? {})) header[name] = ([] as string[]).concat(value);
    const request = { url: webhook.url, method: 'POST' as const, header, body: JSON.stringify(note) };
    const fire = { timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt, messageId: `${msg.fireId}-result-${msg.attempt}` };
    try {
      for (let i = 1; ; i++) {
        const r = await this.callback.deliver(request, fire, secrets);
        if (r.ok) {
          this.posts.inc({ outcome: 'sent' });
          return;
        }
        if (!r.retryable || i >= RESULT_WEBHOOK_ATTEMPTS) {
          this.posts.inc({ outcome: 'failed' });
          this.logger.warn(`result of fire ${msg.fireId} attempt ${msg.attempt} not posted to its result webhook after ${i} tries: ${r.error ?? `HTTP ${r.status}`}`);
          return;
        }
        this.posts.inc({ outcome: 'retried' });
        await this.clock.sleep(1_000 * 2 ** (i - 1));
      }
    } catch (e) {
      this.posts.inc({ outcome: 'failed' });
      this.logger.warn(`result of fire ${msg.fireId} attempt ${msg.attempt} not posted: ${(e as Error).message}`);
    }
  }
}
