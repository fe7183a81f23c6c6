import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes that make MySQL the ledger the design asks for (invariant 8):
 * - `tasks (status, run_at)`: the reconciler finds pending and running fires past their time with a
 *   range scan over the open rows alone, however many finished rows the table keeps;
 * - `tasks (app, run_at, status)`: the accounting of an app's windows (expected, settled, open)
 *   reads the index alone.
 * Both build online (InnoDB in-place, no table lock).
 */
export class LedgerIndexes1764000000000 implements MigrationInterface {
  name = 'LedgerIndexes1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks ADD INDEX idx_status_run_at (status, run_at), ADD INDEX idx_app_run_at (app, run_at, status), ALGORITHM=INPLACE, LOCK=NONE');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks DROP INDEX idx_status_run_at, DROP INDEX idx_app_run_at, ALGORITHM=INPLACE, LOCK=NONE');
  }
}
