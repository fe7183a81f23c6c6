import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-app quotas (docs/behaviour.md, "Quotas and admission"): `apps.max_timers`, `max_fires_per_minute`
 * and `min_interval_ms`, each NULL for the configured default (TIMER_QUOTA_*). Nullable columns
 * without a default: an instant ALTER (metadata only) on InnoDB.
 */
export class AppQuotas1764530000000 implements MigrationInterface {
  name = 'AppQuotas1764530000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE apps ADD COLUMN max_timers INT NULL, ADD COLUMN max_fires_per_minute INT NULL, ADD COLUMN min_interval_ms BIGINT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE apps DROP COLUMN max_timers, DROP COLUMN max_fires_per_minute, DROP COLUMN min_interval_ms');
  }
}
