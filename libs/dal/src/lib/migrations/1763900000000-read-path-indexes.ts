import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the hot read paths at high fire rates:
 * - `timers.updated_at`: the executor's definition cache polls for changed timers every second
 *   instead of reloading every cached definition.
 * - `tasks (run_at, status, timer_id)` replaces `(run_at)`: the trigger's reconcile and sweep and the
 *   executor's prefetch read a run_at range filtered by status and bucket (timer_id % n); with those
 *   columns in the index they read the index alone instead of one row lookup per task in the range.
 * Both build online (InnoDB in-place, no table lock).
 */
export class ReadPathIndexes1763900000000 implements MigrationInterface {
  name = 'ReadPathIndexes1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers ADD INDEX idx_updated_at (updated_at), ALGORITHM=INPLACE, LOCK=NONE');
    await q.query('ALTER TABLE tasks ADD INDEX idx_run_at_status_timer (run_at, status, timer_id), DROP INDEX idx_run_at, ALGORITHM=INPLACE, LOCK=NONE');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks ADD INDEX idx_run_at (run_at), DROP INDEX idx_run_at_status_timer, ALGORITHM=INPLACE, LOCK=NONE');
    await q.query('ALTER TABLE timers DROP INDEX idx_updated_at, ALGORITHM=INPLACE, LOCK=NONE');
  }
}
