import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `timers.next_fire_at` (docs/architecture.md, "migrator"): every fire of the timer before this instant
 * exists; the migrator expands a window from the timers with `0 < next_fire_at < windowEnd` only
 * (`idx_status_next_fire`), so its cost follows the fires of the window, not the timers. NULL: the
 * schedule has no fire left. 0: not known yet (rows that existed before this migration, rows inserted
 * by code that does not set it): the migrator resolves those at the start of each tick, 5,000 rows a
 * statement, to the start of the first window it has not completed (what the old expansion assumed).
 *
 * No backfill here: the value needs the window plan and the cron evaluation, which SQL does not have,
 * and a nullable column with a constant default is an instant ALTER (no row rewritten, no table lock
 * however many rows); the index is built online (LOCK=NONE).
 */
export class TimerNextFire1765010000000 implements MigrationInterface {
  name = 'TimerNextFire1765010000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers ADD COLUMN next_fire_at BIGINT NULL DEFAULT 0, ALGORITHM=INSTANT');
    await q.query('ALTER TABLE timers ADD INDEX idx_status_next_fire (status, next_fire_at), ALGORITHM=INPLACE, LOCK=NONE');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers DROP INDEX idx_status_next_fire, ALGORITHM=INPLACE, LOCK=NONE');
    await q.query('ALTER TABLE timers DROP COLUMN next_fire_at');
  }
}
