import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * DST choices per timer (libs/schedule README, "Daylight saving time"), on `timers` and, for the
 * history, `timer_versions`: `dst_gap` (`shift` | `skip`) and `dst_overlap` (`first` | `both`). The
 * defaults are the fixed rule every timer had until now, so existing rows keep their fires. Instant
 * ADD COLUMN with a constant default (InnoDB, no table copy).
 */
export class DstPolicies1764520000000 implements MigrationInterface {
  name = 'DstPolicies1764520000000';

  async up(q: QueryRunner): Promise<void> {
    const columns = `ADD COLUMN dst_gap VARCHAR(8) NOT NULL DEFAULT 'shift' AFTER time_zone, ADD COLUMN dst_overlap VARCHAR(8) NOT NULL DEFAULT 'first' AFTER dst_gap`;
    await q.query(`ALTER TABLE timers ${columns}`);
    await q.query(`ALTER TABLE timer_versions ${columns}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timers DROP COLUMN dst_gap, DROP COLUMN dst_overlap');
    await q.query('ALTER TABLE timer_versions DROP COLUMN dst_gap, DROP COLUMN dst_overlap');
  }
}
