import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops `tasks.idx_created_at`: no query reads tasks by created_at (retention, the ledger, the
 * reconciler and the records go by run_at), and every fire paid its entry on insert (issue 11, MariaDB
 * CPU per fire). The column stays.
 */
export class DropTaskCreatedAtIndex1765030000000 implements MigrationInterface {
  name = 'DropTaskCreatedAtIndex1765030000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks DROP INDEX idx_created_at, ALGORITHM=INPLACE, LOCK=NONE');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tasks ADD INDEX idx_created_at (created_at), ALGORITHM=INPLACE, LOCK=NONE');
  }
}
