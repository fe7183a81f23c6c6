import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops `tasks.idx_status_run_at (status, run_at)` (issue 11, MariaDB CPU per fire): a claim moved its
 * entry (pending -> running) and an outcome moved it again, the only index a claim touched. Its readers
 * walk the open range of `idx_outcome_run_at (outcome, run_at, timer_id)` instead and check the status
 * in the row: the reconciler's overdue fires in one walk oldest first (pending, or running with an
 * expired claim) that stops at its limit, so a backlog of overdue pending rows is read no further than
 * the limit (two separate ranges read the whole backlog for the expired claims on every pass);
 * `missPaused`, the overdue counts and the overview's backlog are bounded ranges of open rows.
 */
export class DropTaskStatusIndex1765070000000 implements MigrationInterface {
  name = 'DropTaskStatusIndex1765070000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks DROP INDEX idx_status_run_at, ALGORITHM=INPLACE, LOCK=NONE');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks ADD INDEX idx_status_run_at (status, run_at), ALGORITHM=INPLACE, LOCK=NONE');
  }
}
