import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { affectedRows, checkEpochMs, deleteInBatches } from './query-helpers';

/** How long an `Idempotency-Key` answers with its first result (at least; the retention purges older keys). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;

/** The first request made with a key: the hash of its body and, once it committed, its answer. */
export interface StoredIdempotencyKey {
  bodyHash: string;
  /** Null only inside the transaction that reserved the key. */
  response: Record<string, unknown> | null;
  createdAt: number;
}

/** Another request holds this key (committed, or committed while this one waited for it). */
export class IdempotencyKeyTakenError extends Error {
  constructor(
    readonly app: string,
    readonly key: string,
  ) {
    super(`idempotency key already used in app "${app}"`);
    this.name = 'IdempotencyKeyTakenError';
  }
}

/**
 * `idempotency_keys`: one row per (app, key). A request reserves its key in the transaction that does
 * its work, so of two concurrent requests with one key the second waits on the unique key and then
 * fails with {@link IdempotencyKeyTakenError}; it reads the first one's answer instead.
 */
@Injectable()
export class IdempotencyKeyRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The key's first request, when it was made at or after `notBeforeMs` (older ones count as expired). */
  async find(app: string, key: string, notBeforeMs: number): Promise<StoredIdempotencyKey | null> {
    const rows = (await this.dataSource.query('SELECT body_hash, response, created_at FROM idempotency_keys WHERE app = ? AND `key` = ? AND created_at >= ?', [
      app,
      key,
      notBeforeMs,
    ])) as { body_hash: string; response: unknown; created_at: string | number }[];
    const r = rows[0];
    if (!r) return null;
    const response = typeof r.response === 'string' ? (JSON.parse(r.response) as Record<string, unknown>) : (r.response as Record<string, unknown> | null);
    return { bodyHash: r.body_hash, response, createdAt: Number(r.created_at) };
  }

  /**
   * Reserves the key inside `manager`'s transaction (an expired row, created before `expiredBeforeMs`,
   * is replaced), with the request's answer when it is already known (one statement, not an insert
   * and an update). Throws IdempotencyKeyTakenError when another request holds it.
   */
  async reserve(app: string, key: string, bodyHash: string, atMs: number, expiredBeforeMs: number, manager: EntityManager, response?: Record<string, unknown>): Promise<void> {
    if (key.length === 0 || key.length > 255 || !/^[0-9a-f]{64}$/.test(bodyHash)) throw new RangeError('invalid idempotency key or body hash');
    await manager.query('DELETE FROM idempotency_keys WHERE app = ? AND `key` = ? AND created_at < ?', [app, key, expiredBeforeMs]);
    // IGNORE: a duplicate (after waiting for the transaction that holds it) is an answer, not an error to log.
    const result = await manager.query('INSERT IGNORE INTO idempotency_keys (app, `key`, body_hash, created_at, response) VALUES (?, ?, ?, ?, ?)', [
      app,
      key,
      bodyHash,
      atMs,
      response === undefined ? null : JSON.stringify(response),
    ]);
    if (affectedRows(result) === 0) throw new IdempotencyKeyTakenError(app, key);
  }

  /**
   * Deletes keys created before `cutoffMs`, `batchSize` per statement, at most `maxBatches`
   * statements. Returns how many.
   */
  async purgeOlderThan(cutoffMs: number, batchSize: number, maxBatches = Number.POSITIVE_INFINITY): Promise<number> {
    checkEpochMs('cutoffMs', cutoffMs);
    return deleteInBatches(this.dataSource, 'DELETE FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?', [cutoffMs], batchSize, maxBatches);
  }
}
