import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Timers, their fires (tasks) and apps. Instants are BIGINT epoch ms (UTC), never local DATETIME.
 * `live_name` is the name while the timer is not deleted and NULL after, so `(app, live_name)` is
 * unique among live timers and a deleted timer's name can be reused.
 */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE apps (
      app VARCHAR(64) NOT NULL,
      signing_secret VARCHAR(128) NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
      PRIMARY KEY (app)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    await q.query(`CREATE TABLE app_tokens (
      id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
      app VARCHAR(64) NOT NULL,
      token_hash CHAR(64) NOT NULL,
      label VARCHAR(128) NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      revoked_at DATETIME(3) NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uk_token_hash (token_hash),
      KEY idx_app (app),
      CONSTRAINT fk_app_tokens_app FOREIGN KEY (app) REFERENCES apps (app) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    await q.query(`CREATE TABLE timers (
      id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
      app VARCHAR(64) NOT NULL,
      name VARCHAR(255) NOT NULL,
      live_name VARCHAR(255) NULL,
      cron VARCHAR(255) NULL,
      run_at BIGINT NULL,
      time_zone VARCHAR(64) NOT NULL DEFAULT 'UTC',
      notify_http_param JSON NOT NULL,
      status TINYINT NOT NULL,
      max_attempts INT NOT NULL DEFAULT 3,
      backoff_ms INT NOT NULL DEFAULT 1000,
      misfire_policy VARCHAR(32) NOT NULL DEFAULT 'fire_late',
      version INT NOT NULL DEFAULT 1,
      deleted_at BIGINT NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
      PRIMARY KEY (id),
      UNIQUE KEY uk_app_live_name (app, live_name),
      KEY idx_status_id (status, id),
      KEY idx_app_id (app, id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    await q.query(`CREATE TABLE tasks (
      id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
      app VARCHAR(64) NOT NULL,
      timer_id BIGINT UNSIGNED NOT NULL,
      run_at BIGINT NOT NULL,
      status TINYINT NOT NULL DEFAULT 0,
      attempt INT NOT NULL DEFAULT 0,
      http_status SMALLINT NULL,
      cost_ms INT NULL,
      lateness_ms INT NULL,
      error VARCHAR(1024) NULL,
      output VARCHAR(4096) NULL,
      claimed_by VARCHAR(128) NULL,
      claimed_until BIGINT NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
      PRIMARY KEY (id),
      UNIQUE KEY uk_timer_run_at (timer_id, run_at),
      KEY idx_run_at (run_at),
      KEY idx_created_at (created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    await q.query(`CREATE TABLE migrator_windows (
      window_start BIGINT NOT NULL,
      window_end BIGINT NOT NULL,
      completed_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      PRIMARY KEY (window_start)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['migrator_windows', 'tasks', 'timers', 'app_tokens', 'apps']) await q.query(`DROP TABLE IF EXISTS ${t}`);
  }
}
