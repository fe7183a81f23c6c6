import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A timer's result webhook (docs/callback-answers.md): `result_webhook` `{url, headers?}` on `timers`
 * and, for the history, `timer_versions`; NULL = none. The answers themselves need no column: each
 * attempt's entry of `tasks.attempts` (JSON) carries its `response`. A nullable column without a
 * default is an instant ALTER on InnoDB.
 */
export class TimerResultWebhook1765100000000 implements MigrationInterface {
  name = 'TimerResultWebhook1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers ADD COLUMN result_webhook JSON NULL');
    await q.query('ALTER TABLE timer_versions ADD COLUMN result_webhook JSON NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers DROP COLUMN result_webhook');
    await q.query('ALTER TABLE timer_versions DROP COLUMN result_webhook');
  }
}
