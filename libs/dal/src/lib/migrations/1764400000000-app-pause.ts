import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * App-wide pause (docs/behaviour.md, "Pause"): `apps.paused_at` is the start of the app's latest pause
 * and `apps.resumed_at` its end (NULL while it lasts), both epoch ms. Fires of the app with run_at in
 * [paused_at, resumed_at) are recorded missed with the reason `paused` instead of being delivered.
 * Nullable columns without a default: an instant ALTER (metadata only) on InnoDB.
 */
export class AppPause1764400000000 implements MigrationInterface {
  name = 'AppPause1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE apps ADD COLUMN paused_at BIGINT NULL, ADD COLUMN resumed_at BIGINT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE apps DROP COLUMN paused_at, DROP COLUMN resumed_at');
  }
}
