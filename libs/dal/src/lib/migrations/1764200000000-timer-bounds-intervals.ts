import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bounds, intervals and completion (docs/behaviour.md, "Completion"), on `timers` and, for the history,
 * `timer_versions`:
 * - `every_ms`: an interval schedule (fires at start_at + k * every_ms), the third kind beside cron and run_at;
 * - `start_at`, `end_at` (epoch ms, inclusive bounds) and `max_fires`, as given;
 * - `final_at`: the last instant a fire may have, derived when the definition is written (min of
 *   end_at and the max_fires-th fire; a one-shot's run_at), NULL when unbounded. Existing one-shots get
 *   their run_at, so they complete once their fire settled.
 * - `idx_status_final (status, final_at)`: the migrator's completion sweep reads the enabled timers
 *   whose final instant passed as a range of this index.
 * Nullable columns without a default; the index builds online (InnoDB in-place, no table lock).
 */
export class TimerBoundsIntervals1764200000000 implements MigrationInterface {
  name = 'TimerBoundsIntervals1764200000000';

  async up(q: QueryRunner): Promise<void> {
    const columns = `ADD COLUMN every_ms BIGINT NULL AFTER run_at, ADD COLUMN start_at BIGINT NULL AFTER time_zone, ADD COLUMN end_at BIGINT NULL AFTER start_at,
      ADD COLUMN max_fires INT NULL AFTER end_at, ADD COLUMN final_at BIGINT NULL AFTER max_fires`;
    await q.query(`ALTER TABLE timers ${columns}`);
    await q.query(`ALTER TABLE timer_versions ${columns}`);
    await q.query('UPDATE timers SET final_at = run_at WHERE run_at IS NOT NULL');
    await q.query('UPDATE timer_versions SET final_at = run_at WHERE run_at IS NOT NULL');
    await q.query('ALTER TABLE timers ADD INDEX idx_status_final (status, final_at), ALGORITHM=INPLACE, LOCK=NONE');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers DROP INDEX idx_status_final');
    const columns = 'DROP COLUMN every_ms, DROP COLUMN start_at, DROP COLUMN end_at, DROP COLUMN max_fires, DROP COLUMN final_at';
    await q.query(`ALTER TABLE timers ${columns}`);
    await q.query(`ALTER TABLE timer_versions ${columns}`);
  }
}
