import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Editing timers and idempotent creates:
 * - `timer_versions`: one row per version of a timer's definition (create, edit, enable, disable), the
 *   snapshot of the row as it was written, with when (`changed_at`, epoch ms) and how (`change_kind`).
 *   Existing timers get one row for the version they are at (`change_kind` 'existing', the time of
 *   their last change), so their history starts where this migration found them.
 * - `idempotency_keys`: the first answer of a create per (app, `Idempotency-Key`), with the hash of
 *   the request it answered; the unique key is what stops two concurrent duplicates from creating two
 *   timers. Kept at least 24 h (the migrator's retention deletes older ones, `created_at` is epoch ms).
 */
export class TimerVersionsIdempotencyKeys1764100000000 implements MigrationInterface {
  name = 'TimerVersionsIdempotencyKeys1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE timer_versions (
      id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
      timer_id BIGINT UNSIGNED NOT NULL,
      app VARCHAR(64) NOT NULL,
      version INT NOT NULL,
      change_kind VARCHAR(16) NOT NULL,
      changed_at BIGINT NOT NULL,
      name VARCHAR(255) NOT NULL,
      cron VARCHAR(255) NULL,
      run_at BIGINT NULL,
      time_zone VARCHAR(64) NOT NULL,
      notify_http_param JSON NOT NULL,
      status TINYINT NOT NULL,
      max_attempts INT NOT NULL,
      backoff_ms INT NOT NULL,
      misfire_policy VARCHAR(32) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uk_timer_version (timer_id, version)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
    await q.query(`INSERT INTO timer_versions
      (timer_id, app, version, change_kind, changed_at, name, cron, run_at, time_zone, notify_http_param, status, max_attempts, backoff_ms, misfire_policy)
      SELECT id, app, version, 'existing', FLOOR(UNIX_TIMESTAMP(updated_at) * 1000), name, cron, run_at, time_zone, notify_http_param, status,
             max_attempts, backoff_ms, misfire_policy
      FROM timers WHERE deleted_at IS NULL`);
    await q.query(`CREATE TABLE idempotency_keys (
      app VARCHAR(64) NOT NULL,
      \`key\` VARCHAR(255) NOT NULL,
      body_hash CHAR(64) NOT NULL,
      response JSON NULL,
      created_at BIGINT NOT NULL,
      PRIMARY KEY (app, \`key\`),
      KEY idx_created_at (created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['idempotency_keys', 'timer_versions']) await q.query(`DROP TABLE IF EXISTS ${t}`);
  }
}
