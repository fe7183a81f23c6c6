import { Injectable, Optional } from '@nestjs/common';
import { FireRef } from '@timer/contracts';
import { DataSource, EntityManager } from 'typeorm';
import { FailureWebhook } from '../entities/app.entity';
import { TaskAttempt, TaskStatus } from '../entities/task.entity';
import { SecretCipher } from '../secret-cipher';
import { affectedRows, checkEpochMs, isId, PageOptions, pageOffset } from './query-helpers';

/** Which of an app's dead letters a replay or purge acts on: exactly one selector. */
export type DeadLetterSelector = { fireIds: FireRef[] } | { timerId: string } | { all: true };

/** A fire that failed for good (status failed, not purged): the API's view of `timer-tasks-dlq`. */
export interface DeadLetter extends FireRef {
  /** When the failure was recorded (epoch ms). */
  failedAt: number;
  attempts: number;
  httpStatus: number | null;
  error: string | null;
  /** 'attempts exhausted' or 'not retryable' (as `x-timer-reason` of the Pulsar dead letter). */
  reason: string;
  attemptLog: TaskAttempt[];
}

/** A dead letter reopened for a replay, with the attempt it had (restored should its publish fail). */
export interface ReopenedFire extends FireRef {
  id: string;
  attempt: number;
}

/** Where one app's failure notifications go, with the key they are signed with. */
export interface FailureTarget {
  app: string;
  webhook: FailureWebhook | null;
  signingSecret: string | null;
}

/** Rows one purge statement marks. */
export const PURGE_BATCH = 5_000;

interface LetterRow {
  timer_id: string | number;
  run_at: string | number;
  failed_at: string | number;
  attempt: number;
  http_status: number | null;
  error: string | null;
  attempts: TaskAttempt[] | string | null;
  max_attempts: number | null;
}

/**
 * An app's dead letters in MySQL (docs/behaviour.md, "Dead letters"): the failed, unpurged fire rows,
 * read through `idx_app_dead_letter (app, dead_letter_at)`; replay reopens them, purge marks them. Also
 * the apps' failure webhooks.
 */
@Injectable()
export class DeadLetterRepository {
  private readonly cipher: SecretCipher;

  constructor(
    private readonly dataSource: DataSource,
    @Optional() cipher?: SecretCipher,
  ) {
    this.cipher = cipher ?? SecretCipher.PLAIN;
  }

  /** The app's dead letters, latest run time first, and how many it has. */
  async list(app: string, page: PageOptions): Promise<{ items: DeadLetter[]; total: number }> {
    const offset = pageOffset(page);
    const rows = (await this.dataSource.query(
      `SELECT k.timer_id, k.run_at, CAST(UNIX_TIMESTAMP(k.updated_at) * 1000 AS UNSIGNED) AS failed_at, k.attempt, k.http_status, k.error, k.attempts, t.max_attempts
       FROM tasks k FORCE INDEX (idx_app_dead_letter) LEFT JOIN timers t ON t.id = k.timer_id
       WHERE k.app = ? AND k.dead_letter_at IS NOT NULL
       ORDER BY k.dead_letter_at DESC, k.id DESC LIMIT ? OFFSET ?`,
      [app, page.size, offset],
    )) as LetterRow[];
    const [{ n }] = (await this.dataSource.query('SELECT COUNT(*) AS n FROM tasks FORCE INDEX (idx_app_dead_letter) WHERE app = ? AND dead_letter_at IS NOT NULL', [app])) as { n: string | number }[];
    return { items: rows.map(toLetter), total: Number(n) };
  }

  /**
   * Reopens up to `limit` of the app's selected dead letters for a replay (oldest first), in `m`'s
   * transaction: pending at attempt 0, no claim, so the executor's claim of attempt 1 takes each once
   * and a second message of the same fire finds it running or settled (a duplicate). The failed
   * outcome's columns and the attempt log stay until the replay's outcome replaces them.
   */
  async reopen(app: string, selector: DeadLetterSelector, limit: number, m: EntityManager): Promise<ReopenedFire[]> {
    const where = selectorSql(selector);
    if (!where) return [];
    const rows = (await m.query(
      `SELECT id, timer_id, run_at, attempt FROM tasks FORCE INDEX (idx_app_dead_letter)
       WHERE app = ? AND dead_letter_at IS NOT NULL AND ${where.sql}
       ORDER BY dead_letter_at, id LIMIT ? FOR UPDATE`,
      [app, ...where.params, limit],
    )) as { id: string | number; timer_id: string | number; run_at: string | number; attempt: number }[];
    if (rows.length === 0) return [];
    await m.query(
      `UPDATE tasks SET status = ?, attempt = 0, claimed_by = NULL, claimed_until = NULL WHERE id IN (${rows.map(() => '?').join(',')}) AND status = ?`,
      [TaskStatus.Pending, ...rows.map((r) => String(r.id)), TaskStatus.Failed],
    );
    return rows.map((r) => ({ id: String(r.id), timerId: String(r.timer_id), runAt: Number(r.run_at), attempt: Number(r.attempt) }));
  }

  /**
   * Makes reopened fires dead letters again, as they were: for a replay whose messages could not be
   * published. Only fires no claim took since (pending at attempt 0), so nothing delivered is undone.
   */
  async restore(fires: ReopenedFire[]): Promise<number> {
    let restored = 0;
    for (const f of fires) {
      const result = await this.dataSource.query('UPDATE tasks SET status = ?, attempt = ? WHERE id = ? AND status = ? AND attempt = 0', [
        TaskStatus.Failed,
        f.attempt,
        f.id,
        TaskStatus.Pending,
      ]);
      restored += affectedRows(result);
    }
    return restored;
  }

  /** Dead letters of the app the selector names, beyond those a replay took (for `remaining`). */
  async count(app: string, selector: DeadLetterSelector): Promise<number> {
    const where = selectorSql(selector);
    if (!where) return 0;
    const [{ n }] = (await this.dataSource.query(
      `SELECT COUNT(*) AS n FROM tasks FORCE INDEX (idx_app_dead_letter) WHERE app = ? AND dead_letter_at IS NOT NULL AND ${where.sql}`,
      [app, ...where.params],
    )) as { n: string | number }[];
    return Number(n);
  }

  /**
   * Removes the app's selected dead letters from its list (`dlq_purged_at` = nowMs), `PURGE_BATCH` rows
   * a statement; the fires' failed records stay. Returns how many were purged.
   */
  async purge(app: string, selector: DeadLetterSelector, nowMs: number): Promise<number> {
    checkEpochMs('nowMs', nowMs);
    const where = selectorSql(selector);
    if (!where) return 0;
    let purged = 0;
    for (;;) {
      const result = await this.dataSource.query(
        `UPDATE tasks SET dlq_purged_at = ? WHERE app = ? AND dead_letter_at IS NOT NULL AND ${where.sql} LIMIT ${PURGE_BATCH}`,
        [nowMs, app, ...where.params],
      );
      const n = affectedRows(result);
      purged += n;
      if (n < PURGE_BATCH) return purged;
    }
  }

  /** Sets (or with null removes) the app's failure webhook; false when the app does not exist. */
  async setFailureWebhook(app: string, webhook: FailureWebhook | null): Promise<boolean> {
    const result = await this.dataSource.query('UPDATE apps SET failure_webhook = ? WHERE app = ?', [webhook === null ? null : JSON.stringify(webhook), app]);
    if (affectedRows(result) > 0) return true;
    const found = (await this.dataSource.query('SELECT 1 FROM apps WHERE app = ?', [app])) as unknown[];
    return found.length > 0;
  }

  /** The app and failure webhook of each fire that has a row, by fire (one query for a batch). */
  async targetsOf(fires: FireRef[]): Promise<Map<string, FailureTarget>> {
    const valid = fires.filter((f) => isId(f.timerId) && Number.isSafeInteger(f.runAt));
    const out = new Map<string, FailureTarget>();
    if (valid.length === 0) return out;
    const rows = (await this.dataSource.query(
      `SELECT k.timer_id, k.run_at, a.app, COALESCE(t.failure_webhook, a.failure_webhook) AS failure_webhook, a.signing_secret
       FROM tasks k JOIN apps a ON a.app = k.app LEFT JOIN timers t ON t.id = k.timer_id
       WHERE (k.timer_id, k.run_at) IN (${valid.map(() => '(CAST(? AS UNSIGNED), ?)').join(',')})`,
      valid.flatMap((f) => [f.timerId, f.runAt]),
    )) as { timer_id: string | number; run_at: string | number; app: string; failure_webhook: FailureWebhook | string | null; signing_secret: string | null }[];
    for (const r of rows) {
      out.set(`${r.timer_id}-${Number(r.run_at)}`, { app: r.app, webhook: parseJson<FailureWebhook>(r.failure_webhook), signingSecret: this.cipher.openOrNull(r.app, r.signing_secret) });
    }
    return out;
  }
}

function selectorSql(s: DeadLetterSelector): { sql: string; params: unknown[] } | null {
  if ('all' in s) return { sql: 'TRUE', params: [] };
  if ('timerId' in s) return isId(s.timerId) ? { sql: 'timer_id = CAST(? AS UNSIGNED)', params: [s.timerId] } : null;
  const valid = s.fireIds.filter((f) => isId(f.timerId) && Number.isSafeInteger(f.runAt));
  if (valid.length === 0) return null;
  return { sql: `(timer_id, run_at) IN (${valid.map(() => '(CAST(? AS UNSIGNED), ?)').join(',')})`, params: valid.flatMap((f) => [f.timerId, f.runAt]) };
}

function parseJson<T>(v: T | string | null): T | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? (JSON.parse(v) as T) : v;
}

function toLetter(r: LetterRow): DeadLetter {
  const attempts = Number(r.attempt);
  const log = parseJson<TaskAttempt[]>(r.attempts) ?? [];
  // The executor dead-letters either on its last attempt or on a failure that cannot heal.
  const reason = r.max_attempts !== null && attempts >= Number(r.max_attempts) ? 'attempts exhausted' : 'not retryable';
  return {
    timerId: String(r.timer_id),
    runAt: Number(r.run_at),
    failedAt: Number(r.failed_at),
    attempts,
    httpStatus: r.http_status === null ? null : Number(r.http_status),
    error: r.error,
    reason,
    attemptLog: Array.isArray(log) ? log : [],
  };
}
