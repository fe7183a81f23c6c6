import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes of `tasks` that a claim touches once instead of 3 times (issue 11, MariaDB CPU per fire):
 * every status change moved an entry in each of the 3 indexes holding `status`, 6 moves per delivered
 * fire.
 * - `tasks.outcome`: a stored generated column, 0 while the fire is open (pending or running), else its
 *   final status; the claim (pending -> running) leaves it, so no index entry moves on a claim. STORED,
 *   not VIRTUAL: MariaDB pushes no condition down to an index holding a virtual column, so the trigger's
 *   bucket test read every row of the range (docs/scaling.md, "MySQL"). Adding a stored column
 *   rebuilds the table (ALGORITHM=COPY, LOCK=SHARED: reads go on, writes wait for the copy); the index changes are then in place, without a lock.
 * - `idx_outcome_run_at (outcome, run_at, timer_id)` replaces `idx_run_at_status_timer`: the trigger's
 *   pending read (bucket on timer_id in the index), the executor's prefetch, retention's finished rows
 *   and the all-apps counts are each a bounded range of it.
 * - `idx_status_run_at` stays, the one index a claim moves: the reconciler finds running fires with an
 *   expired claim there without reading the overdue pending ones (without it a pass read every row of
 *   a backlog).
 * - `idx_app_run_at_outcome (app, run_at, outcome)` replaces `idx_app_run_at`: an app's accounting,
 *   overview and records, index-only as before (open = outcome 0).
 * Pending and running differ in the row alone: the few reads that need pending exactly check the row.
 */
export class TaskOutcomeIndexes1765040000000 implements MigrationInterface {
  name = 'TaskOutcomeIndexes1765040000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks ADD COLUMN outcome TINYINT AS (IF(status <= 1, 0, status)) STORED, ALGORITHM=COPY, LOCK=SHARED');
    await q.query(
      `ALTER TABLE tasks ADD INDEX idx_outcome_run_at (outcome, run_at, timer_id), ADD INDEX idx_app_run_at_outcome (app, run_at, outcome),
       DROP INDEX idx_run_at_status_timer, DROP INDEX idx_app_run_at, ALGORITHM=INPLACE, LOCK=NONE`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE tasks ADD INDEX idx_run_at_status_timer (run_at, status, timer_id), ADD INDEX idx_app_run_at (app, run_at, status),
       DROP INDEX idx_outcome_run_at, DROP INDEX idx_app_run_at_outcome, ALGORITHM=INPLACE, LOCK=NONE`,
    );
    await q.query('ALTER TABLE tasks DROP COLUMN outcome, ALGORITHM=COPY, LOCK=SHARED');
  }
}
