import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fire policies (docs/behaviour.md, "Fire policies"), on `timers` and, for the history, `timer_versions`:
 * - `overlap_policy`: `allow` (today's behaviour), `skip` or `buffer_one`;
 * - `catchup_policy`: `all`, `latest` or `none`; NULL = the timer's `misfire_policy` decides (as before);
 * - `catchup_window_ms`: how late a fire may still be delivered; NULL = TIMER_MISFIRE_WINDOW_MS;
 * - `jitter_ms`: each fire is delayed by a fixed amount in [0, jitter_ms) derived from its id; 0 = none.
 * The defaults keep every existing timer as it was; ADD COLUMN with a constant default is an instant
 * ALTER (metadata only) on InnoDB.
 */
export class FirePolicies1764510000000 implements MigrationInterface {
  name = 'FirePolicies1764510000000';

  async up(q: QueryRunner): Promise<void> {
    const columns = `ADD COLUMN overlap_policy VARCHAR(16) NOT NULL DEFAULT 'allow', ADD COLUMN catchup_policy VARCHAR(16) NULL,
      ADD COLUMN catchup_window_ms BIGINT NULL, ADD COLUMN jitter_ms INT NOT NULL DEFAULT 0`;
    await q.query(`ALTER TABLE timers ${columns}`);
    await q.query(`ALTER TABLE timer_versions ${columns}`);
  }

  async down(q: QueryRunner): Promise<void> {
    const columns = 'DROP COLUMN overlap_policy, DROP COLUMN catchup_policy, DROP COLUMN catchup_window_ms, DROP COLUMN jitter_ms';
    await q.query(`ALTER TABLE timers ${columns}`);
    await q.query(`ALTER TABLE timer_versions ${columns}`);
  }
}
