import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `tasks.attempts`: every delivery attempt of a fire (`[{attempt, startedAt, httpStatus, costMs,
 * error}]`), appended by the executor in the same UPDATE that records the attempt's outcome, so
 * keeping the history costs no extra statement. NULL until the first attempt (and for fires never
 * called: missed, superseded). A nullable column added at the end: instant in MariaDB 10.3+ and
 * MySQL 8.0.12+, no table copy.
 */
export class TaskAttempts1764300000000 implements MigrationInterface {
  name = 'TaskAttempts1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks ADD COLUMN attempts JSON NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks DROP COLUMN attempts');
  }
}
