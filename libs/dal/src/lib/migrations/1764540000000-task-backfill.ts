import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `tasks.backfill`: 1 on a fire created by `POST /api/timer/v1/backfill` (a past instant delivered on
 * request), so the records show it and the reconciler re-publishes it as one (exempt from the
 * catch-up policy, `X-Timer-Backfill: 1`). A NOT NULL column with a default added at the end: instant
 * in MariaDB 10.3+ and MySQL 8.0.12+, no table copy.
 */
export class TaskBackfill1764540000000 implements MigrationInterface {
  name = 'TaskBackfill1764540000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks ADD COLUMN backfill TINYINT(1) NOT NULL DEFAULT 0');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks DROP COLUMN backfill');
  }
}
