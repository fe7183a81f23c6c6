import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `autoSpread` (docs/behaviour.md, "Fire policies"; apps/api/README.md, "Quotas and admission"), on
 * `timers` and, for the history, `timer_versions`:
 * - `auto_spread`: admission may move the timer's fires within its `jitter_ms` instead of refusing it;
 * - `spread_offset_ms`: the delay admission chose for every fire of the timer (a whole number of
 *   seconds in [0, jitter_ms)), replacing the hash-derived jitter; NULL without autoSpread.
 * `idx_spread_offset` finds the few timers with an offset, which the load projection counts at their
 * offset second. A constant default and a nullable column are instant ALTERs on InnoDB.
 */
export class TimerAutoSpread1765000000000 implements MigrationInterface {
  name = 'TimerAutoSpread1765000000000';

  async up(q: QueryRunner): Promise<void> {
    const columns = 'ADD COLUMN auto_spread TINYINT(1) NOT NULL DEFAULT 0, ADD COLUMN spread_offset_ms INT NULL';
    await q.query(`ALTER TABLE timers ${columns}`);
    await q.query(`ALTER TABLE timer_versions ${columns}`);
    await q.query('CREATE INDEX idx_spread_offset ON timers (spread_offset_ms)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX idx_spread_offset ON timers');
    const columns = 'DROP COLUMN auto_spread, DROP COLUMN spread_offset_ms';
    await q.query(`ALTER TABLE timers ${columns}`);
    await q.query(`ALTER TABLE timer_versions ${columns}`);
  }
}
