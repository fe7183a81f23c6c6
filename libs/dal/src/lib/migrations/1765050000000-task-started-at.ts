import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `tasks.started_at` (issue 11, MariaDB CPU per fire): when a first-attempt success's callback started
 * (epoch ms), 0 when not written that way. Such a success no longer appends its attempt to the
 * `attempts` JSON, which stays NULL: the readers rebuild the one entry from the row's columns
 * (`attemptsOf`). Appending the JSON was a large share of an outcome's cost, mostly the row growing
 * past its page (docs/benchmarks.md, "Measurements behind the code"). NOT NULL DEFAULT 0, so a row
 * is inserted at its full width and the outcome changes its size by nothing for this column. Every other outcome appends as before, so rows
 * written before this migration read as they did.
 * No ALGORITHM clause: MySQL 8 adds the column INSTANT (metadata only); MariaDB refuses INSTANT on
 * `tasks` (ER_ALTER_OPERATION_NOT_SUPPORTED, 10.11) and rebuilds it online (INPLACE, LOCK=NONE: writes
 * go on during the rebuild, a short exclusive lock at its end). docs/operations.md, "Upgrades that
 * rebuild a table".
 */
export class TaskStartedAt1765050000000 implements MigrationInterface {
  name = 'TaskStartedAt1765050000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks ADD COLUMN started_at BIGINT NOT NULL DEFAULT 0');
  }

  /** Folds the rebuilt entries back into `attempts` first, so no success loses its attempt. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE tasks SET attempts = JSON_ARRAY(JSON_OBJECT('attempt', attempt, 'startedAt', started_at, 'httpStatus', http_status, 'costMs', cost_ms, 'error', LEFT(error, 256)))
       WHERE attempts IS NULL AND started_at <> 0`,
    );
    await q.query('ALTER TABLE tasks DROP COLUMN started_at');
  }
}
