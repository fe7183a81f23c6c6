import { Counter, Registry } from 'prom-client';

export type NotificationOutcome = 'sent' | 'no_webhook' | 'refused' | 'expired' | 'retried';

/** The failure notifier's Prometheus metrics (registered on the role's registry). */
export class FailureNotifierMetrics {
  readonly notifications: Counter<'outcome'>;
  readonly posts: Counter<'outcome'>;

  constructor(registry: Registry) {
    this.notifications = new Counter({
      name: 'timer_failure_notifications_total',
      help: 'Dead letters the failure notifier handled, by outcome: sent, no_webhook (the app has none), refused (a private address), expired (undeliverable for 24 h), retried (handed back to the broker)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.posts = new Counter({
      name: 'timer_failure_webhook_posts_total',
      help: 'POSTs to failure webhooks, by outcome: ok, failed',
      labelNames: ['outcome'],
      registers: [registry],
    });
  }
}
