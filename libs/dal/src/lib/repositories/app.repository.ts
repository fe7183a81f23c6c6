import { Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'crypto';
import { DataSource } from 'typeorm';
import { AppEntity } from '../entities/app.entity';
import { DuplicateAppError, isDuplicateKeyError } from '../errors';
import { affectedRows, isId } from './query-helpers';

/** Prefix of every app token, so a leaked one is recognisable (secret scanners). */
export const APP_TOKEN_PREFIX = 'tmr_';

/** SHA-256 (hex) of a token: what app_tokens stores instead of the token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Apps, their API tokens and callback signing secrets. */
@Injectable()
export class AppRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Creates the app unless it exists (INSERT IGNORE); returns it. */
  async ensure(app: string): Promise<AppEntity> {
    await this.dataSource.query('INSERT IGNORE INTO apps (app) VALUES (?)', [app]);
    return this.dataSource.manager.findOneByOrFail(AppEntity, { app });
  }

  /** Creates the app; throws DuplicateAppError when it exists. */
  async create(app: string): Promise<AppEntity> {
    try {
      await this.dataSource.query('INSERT INTO apps (app) VALUES (?)', [app]);
    } catch (e) {
      if (isDuplicateKeyError(e)) throw new DuplicateAppError(app);
      throw e;
    }
    return this.dataSource.manager.findOneByOrFail(AppEntity, { app });
  }

  async find(app: string): Promise<AppEntity | null> {
    return this.dataSource.manager.findOneBy(AppEntity, { app });
  }

  /**
   * Issues a token for the app (creating the app if needed): `tmr_` + 32 random bytes base64url.
   * Only its SHA-256 is stored; the token is returned once.
   */
  async addToken(app: string, label?: string): Promise<{ id: string; token: string }> {
    await this.dataSource.query('INSERT IGNORE INTO apps (app) VALUES (?)', [app]);
    const token = `${APP_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const result = (await this.dataSource.query('INSERT INTO app_tokens (app, token_hash, label) VALUES (?, ?, ?)', [
      app,
      hashToken(token),
      label ?? null,
    ])) as { insertId: number | string };
    return { id: String(result.insertId), token };
  }

  /** Revokes one of the app's tokens; false when the app has no such active token. */
  async revokeToken(app: string, tokenId: string): Promise<boolean> {
    if (!isId(tokenId)) return false;
    const result = await this.dataSource.query(
      'UPDATE app_tokens SET revoked_at = CURRENT_TIMESTAMP(3) WHERE id = CAST(? AS UNSIGNED) AND app = ? AND revoked_at IS NULL',
      [tokenId, app],
    );
    return affectedRows(result) > 0;
  }

  /** The app a token belongs to (looked up by its SHA-256), or null when unknown or revoked. */
  async appForToken(token: string): Promise<string | null> {
    if (typeof token !== 'string' || !token.startsWith(APP_TOKEN_PREFIX) || token.length > 256) return null;
    const rows = (await this.dataSource.query('SELECT app FROM app_tokens WHERE token_hash = ? AND revoked_at IS NULL', [hashToken(token)])) as {
      app: string;
    }[];
    return rows[0]?.app ?? null;
  }

  /** Sets a new random signing secret (creating the app if needed) and returns it; it is shown once. */
  async rotateSecret(app: string): Promise<string> {
    const secret = randomBytes(32).toString('base64url');
    await this.dataSource.query('INSERT INTO apps (app, signing_secret) VALUES (?, ?) ON DUPLICATE KEY UPDATE signing_secret = VALUES(signing_secret)', [
      app,
      secret,
    ]);
    return secret;
  }
}
