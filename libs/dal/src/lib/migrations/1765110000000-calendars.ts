import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Calendars (docs/calendars.md): `calendars` holds an app's named calendars of excluded days
 * (`exclude` JSON: dates, holidays, weekdays), unique by (app, name). On `timers` and, for the
 * history, `timer_versions`: `calendars` (JSON array of names) and `on_excluded`. `timers.calendar_rules`
 * is the timer's copy of its calendars' definitions, rewritten when one of them is edited, so every
 * role computes fires from the timer's row alone. Nullable columns and a constant default are instant
 * ALTERs on InnoDB.
 */
export class Calendars1765110000000 implements MigrationInterface {
  name = 'Calendars1765110000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE calendars (
      id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
      app VARCHAR(64) NOT NULL,
      name VARCHAR(64) NOT NULL,
      time_zone VARCHAR(64) NULL,
      exclude JSON NOT NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
      PRIMARY KEY (id),
      UNIQUE KEY uk_app_name (app, name)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    const columns = "ADD COLUMN calendars JSON NULL, ADD COLUMN on_excluded VARCHAR(24) NOT NULL DEFAULT 'skip'";
    await q.query(`ALTER TABLE timers ${columns}, ADD COLUMN calendar_rules JSON NULL`);
    await q.query(`ALTER TABLE timer_versions ${columns}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE timer_versions DROP COLUMN calendars, DROP COLUMN on_excluded');
    await q.query('ALTER TABLE timers DROP COLUMN calendars, DROP COLUMN on_excluded, DROP COLUMN calendar_rules');
    await q.query('DROP TABLE calendars');
  }
}
