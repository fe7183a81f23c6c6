import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signing secret rotation with an overlap (apps/api/README.md, "Callback signatures"): the secret a
 * rotation replaced keeps signing until `previous_secret_until` (epoch ms). Both secret columns grow
 * to hold a value sealed under TIMER_SECRETS_KEY (`enc:v1:...`, about 110 characters for a 32-byte
 * secret). The apps table is small: a copy, if the server picks one, is short.
 */
export class AppSecretRotation1765090000000 implements MigrationInterface {
  name = 'AppSecretRotation1765090000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE apps MODIFY signing_secret VARCHAR(255) NULL, ADD COLUMN previous_signing_secret VARCHAR(255) NULL AFTER signing_secret, ADD COLUMN previous_secret_until BIGINT NULL AFTER previous_signing_secret',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE apps DROP COLUMN previous_secret_until, DROP COLUMN previous_signing_secret, MODIFY signing_secret VARCHAR(128) NULL');
  }
}
