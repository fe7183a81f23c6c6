import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `maintenance_windows`: an app's windows during which fires of the covered timers (`timer_ids` JSON,
 * NULL = all of the app's) are skipped or deferred to the window's end. Fixed (`from_ms`, `to_ms`) or
 * recurring (`cron` in UTC + `duration_ms`); read per app (`idx_app`).
 */
export class MaintenanceWindows1764560000000 implements MigrationInterface {
  name = 'MaintenanceWindows1764560000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE maintenance_windows (
      id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
      app VARCHAR(64) NOT NULL,
      timer_ids JSON NULL,
      from_ms BIGINT NULL,
      to_ms BIGINT NULL,
      cron VARCHAR(255) NULL,
      duration_ms BIGINT NULL,
      policy VARCHAR(8) NOT NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      PRIMARY KEY (id),
      KEY idx_app (app)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE maintenance_windows');
  }
}
