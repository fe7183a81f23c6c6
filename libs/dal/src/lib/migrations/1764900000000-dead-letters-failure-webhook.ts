import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dead letters through the API and failure notifications (docs/behaviour.md, "Dead letters"):
 * - `tasks.dlq_purged_at`: when the app purged the fire's dead letter (epoch ms); the failed record stays.
 * - `tasks.dead_letter_at`: a virtual column, the run_at of a failed fire not purged, else NULL, indexed
 *   with the app: an app's dead letters newest first without scanning its delivered fires. A fire's
 *   value changes only when it fails or is purged or replayed, so the hot path (pending, running,
 *   succeeded) never moves its index entry. `status = 3` is `FireStatus.Failed` (libs/contracts): a
 *   migration keeps the literal it ran with, whatever the vocabulary becomes.
 * - `apps.failure_webhook`: `{url, headers?}` the app's failure notifications go to; NULL = none.
 */
export class DeadLettersFailureWebhook1764900000000 implements MigrationInterface {
  name = 'DeadLettersFailureWebhook1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE apps ADD COLUMN failure_webhook JSON NULL');
    await q.query(
      `ALTER TABLE tasks ADD COLUMN dlq_purged_at BIGINT NULL,
       ADD COLUMN dead_letter_at BIGINT AS (IF(status = 3 AND dlq_purged_at IS NULL, run_at, NULL)) VIRTUAL,
       ADD INDEX idx_app_dead_letter (app, dead_letter_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks DROP INDEX idx_app_dead_letter, DROP COLUMN dead_letter_at, DROP COLUMN dlq_purged_at');
    await q.query('ALTER TABLE apps DROP COLUMN failure_webhook');
  }
}
