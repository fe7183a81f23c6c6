import { Injectable, Optional } from '@nestjs/common';
import { createHash, randomBytes } from 'crypto';
import { DataSource, EntityManager } from 'typeorm';
import { AppEntity } from '../entities/app.entity';
import { DuplicateAppError, isDuplicateKeyError } from '../errors';
import { SecretCipher } from '../secret-cipher';
import { affectedRows, checkEpochMs, isId } from './query-helpers';

/** Prefix of every app token, so a leaked one is recognisable (secret scanners). */
export const APP_TOKEN_PREFIX = 'tmr_';

/** SHA-256 (hex) of a token: what app_tokens stores instead of the token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * An app's latest pause: fires with pausedAt <= run_at < resumedAt are not delivered (recorded missed,
 * reason `paused`); resumedAt is null while the pause lasts.
 */
export interface PauseWindow {
  app: string;
  pausedAt: number;
  resumedAt: number | null;
}

/** An app as its list shows it: no secret, nothing a token could be rebuilt from. */
export interface AppSummary {
  app: string;
  createdAt: number;
  liveTimers: number;
  /** A pause without its resume. */
  paused: boolean;
  /** Tokens not revoked. */
  liveTokens: number;
}

/** A token as its list shows it: never the token or its hash. */
export interface TokenSummary {
  id: string;
  label: string | null;
  createdAt: number;
  revokedAt: number | null;
}

/** Apps, their API tokens, callback signing secrets and pauses. */
@Injectable()
export class AppRepository {
  private readonly cipher: SecretCipher;

  constructor(
    private readonly dataSource: DataSource,
    @Optional() cipher?: SecretCipher,
  ) {
    this.cipher = cipher ?? SecretCipher.PLAIN;
  }

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

  /** One page of the apps, by name. */
  async list(pageIndex: number, pageSize: number): Promise<{ data: AppSummary[]; total: number }> {
    const rows = (await this.dataSource.query(
      `SELECT a.app, a.created_at, a.live_timers, a.paused_at IS NOT NULL AND a.resumed_at IS NULL AS paused,
         (SELECT COUNT(*) FROM app_tokens t WHERE t.app = a.app AND t.revoked_at IS NULL) AS live_tokens
       FROM apps a ORDER BY a.app LIMIT ? OFFSET ?`,
      [pageSize, (pageIndex - 1) * pageSize],
    )) as { app: string; created_at: Date; live_timers: number | string; paused: number | string; live_tokens: number | string }[];
    const [{ n }] = (await this.dataSource.query('SELECT COUNT(*) AS n FROM apps')) as { n: number | string }[];
    return {
      data: rows.map((r) => ({ app: r.app, createdAt: r.created_at.getTime(), liveTimers: Number(r.live_timers), paused: Number(r.paused) === 1, liveTokens: Number(r.live_tokens) })),
      total: Number(n),
    };
  }

  /** The app's tokens, newest first: the live ones, or every one with `includeRevoked`. */
  async listTokens(app: string, includeRevoked: boolean): Promise<TokenSummary[]> {
    const rows = (await this.dataSource.query(
      `SELECT id, label, created_at, revoked_at FROM app_tokens WHERE app = ?${includeRevoked ? '' : ' AND revoked_at IS NULL'} ORDER BY id DESC`,
      [app],
    )) as { id: number | string; label: string | null; created_at: Date; revoked_at: Date | null }[];
    return rows.map((r) => ({ id: String(r.id), label: r.label, createdAt: r.created_at.getTime(), revokedAt: r.revoked_at === null ? null : r.revoked_at.getTime() }));
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

  /**
   * Sets a new random signing secret, `whsec_` + 32 random bytes base64 (Standard Webhooks), creating
   * the app if needed, and returns it; it is shown once and stored sealed (SecretCipher). With
   * `previousUntil` (epoch ms) the replaced secret keeps signing until then, beside the new one; a
   * rotation during an overlap drops the older secret. Without it the old secret stops at once.
   */
  async rotateSecret(app: string, previousUntil: number | null = null): Promise<string> {
    if (previousUntil !== null) checkEpochMs('previousUntil', previousUntil);
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const sealed = this.cipher.seal(app, secret);
    // MySQL assigns left to right, so the previous_* columns read the secret being replaced.
    await this.dataSource.query(
      `INSERT INTO apps (app, signing_secret) VALUES (?, ?) ON DUPLICATE KEY UPDATE
         previous_signing_secret = IF(? IS NULL, NULL, signing_secret),
         previous_secret_until = IF(? IS NULL OR signing_secret IS NULL, NULL, ?),
         signing_secret = VALUES(signing_secret)`,
      [app, sealed, previousUntil, previousUntil, previousUntil],
    );
    return secret;
  }

  /**
   * Seals the secrets stored as plain text (before TIMER_SECRETS_KEY was set) under the configured key;
   * a row changed meanwhile is left to the next call. Returns how many apps it sealed; 0 without a key.
   */
  async sealPlainSecrets(): Promise<number> {
    if (!this.cipher.sealing) return 0;
    const rows = (await this.dataSource.query(
      "SELECT app, signing_secret, previous_signing_secret FROM apps WHERE signing_secret NOT LIKE 'enc:%' OR previous_signing_secret NOT LIKE 'enc:%'",
    )) as { app: string; signing_secret: string | null; previous_signing_secret: string | null }[];
    let sealed = 0;
    for (const r of rows) {
      const seal = (v: string | null) => (v === null || SecretCipher.isSealed(v) ? v : this.cipher.seal(r.app, v));
      // updated_at is kept: the secrets are the same, so the executors' caches need not drop the app.
      const result = await this.dataSource.query(
        'UPDATE apps SET signing_secret = ?, previous_signing_secret = ?, updated_at = updated_at WHERE app = ? AND signing_secret <=> ? AND previous_signing_secret <=> ?',
        [seal(r.signing_secret), seal(r.previous_signing_secret), r.app, r.signing_secret, r.previous_signing_secret],
      );
      sealed += affectedRows(result);
    }
    return sealed;
  }

  /** The app's pause columns, row-locked (SELECT ... FOR UPDATE) until `manager`'s transaction ends; null when no such app. */
  async pauseForUpdate(app: string, manager: EntityManager): Promise<{ pausedAt: number | null; resumedAt: number | null } | null> {
    const rows = (await manager.query('SELECT paused_at, resumed_at FROM apps WHERE app = ? FOR UPDATE', [app])) as {
      paused_at: string | number | null;
      resumed_at: string | number | null;
    }[];
    if (rows.length === 0) return null;
    const num = (v: string | number | null) => (v === null ? null : Number(v));
    return { pausedAt: num(rows[0].paused_at), resumedAt: num(rows[0].resumed_at) };
  }

  /**
   * Writes the app's pause window. `updated_at` is kept: a pause changes no definition or secret, so the
   * executors' definition caches (which poll `updated_at`) must not drop every timer of the app.
   */
  async setPause(app: string, pausedAt: number, resumedAt: number | null, manager: EntityManager): Promise<void> {
    checkEpochMs('pausedAt', pausedAt);
    if (resumedAt !== null) checkEpochMs('resumedAt', resumedAt);
    await manager.query('UPDATE apps SET paused_at = ?, resumed_at = ?, updated_at = updated_at WHERE app = ?', [pausedAt, resumedAt, app]);
  }

  /** Pauses that last, and those that ended at or after `endedSince` (epoch ms). Reads the whole (small) apps table. */
  async pauseWindows(endedSince: number): Promise<PauseWindow[]> {
    checkEpochMs('endedSince', endedSince);
    const rows = (await this.dataSource.query(
      'SELECT app, paused_at, resumed_at FROM apps WHERE paused_at IS NOT NULL AND (resumed_at IS NULL OR resumed_at >= ?) ORDER BY app',
      [endedSince],
    )) as { app: string; paused_at: string | number; resumed_at: string | number | null }[];
    return rows.map((r) => ({ app: r.app, pausedAt: Number(r.paused_at), resumedAt: r.resumed_at === null ? null : Number(r.resumed_at) }));
  }
}
