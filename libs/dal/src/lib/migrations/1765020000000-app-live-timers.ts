import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `apps.live_timers`: the app's live (not deleted) timers, kept by the api under the app's row lock
 * (a create adds one, a delete takes one away), so the maxTimers check of a create reads one row
 * instead of counting the app's timers (a scan that grew with the app, under its lock). Filled here
 * from the rows that exist; an adding column with a constant default is an instant ALTER.
 */
export class AppLiveTimers1765020000000 implements MigrationInterface {
  name = 'AppLiveTimers1765020000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE apps ADD COLUMN live_timers INT UNSIGNED NOT NULL DEFAULT 0, ALGORITHM=INSTANT');
    await q.query('UPDATE apps a SET a.live_timers = (SELECT COUNT(*) FROM timers t WHERE t.app = a.app AND t.live_name IS NOT NULL), a.updated_at = a.updated_at');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE apps DROP COLUMN live_timers');
  }
}
