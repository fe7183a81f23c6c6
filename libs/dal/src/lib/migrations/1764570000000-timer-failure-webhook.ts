import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A timer's own failure webhook (docs/behaviour.md, "Failure notifications"): `failure_webhook`
 * `{url, headers?}` on `timers` and, for the history, `timer_versions`; NULL = the app's
 * (`apps.failure_webhook`). A nullable column without a default is an instant ALTER on InnoDB.
 */
export class TimerFailureWebhook1764570000000 implements MigrationInterface {
  name = 'TimerFailureWebhook1764570000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers ADD COLUMN failure_webhook JSON NULL');
    await q.query('ALTER TABLE timer_versions ADD COLUMN failure_webhook JSON NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers DROP COLUMN failure_webhook');
    await q.query('ALTER TABLE timer_versions DROP COLUMN failure_webhook');
  }
}
