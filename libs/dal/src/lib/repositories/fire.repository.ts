import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppEntity } from '../entities/app.entity';
import { TASK_ERROR_MAX, TASK_OUTPUT_MAX, TaskStatus, TaskStatusValue } from '../entities/task.entity';
import { TimerEntity } from '../entities/timer.entity';
import { truncateUtf8 } from '../truncate';
import { affectedRows, isId } from './query-helpers';

/** A fire's identity. */
export interface FireKey {
  timerId: string;
  /** Epoch ms. */
  runAt: number;
}

/** What the executor asks for when it takes a fire for one delivery attempt. */
export interface FireClaimRequest extends FireKey {
  /** 1-based attempt the claimer is about to deliver. */
  attempt: number;
  /** Unique per claim (not just per process): the fence every later write of this claim carries. */
  token: string;
  nowMs: number;
  /** The claim is held until nowMs + leaseMs; after that another executor may take it over. */
  leaseMs: number;
}

/** The claim-relevant columns of a fire. */
export interface FireState {
  status: TaskStatusValue;
  attempt: number;
  claimedBy: string | null;
  claimedUntil: number | null;
}

/**
 * The outcome of one claimed attempt, written only while the claim is still the writer's (fenced on
 * `token` and `attempt`). `status` Running means "waiting for the next attempt".
 */
export interface FireOutcome extends FireKey {
  token: string;
  attempt: number;
  status: TaskStatusValue;
  httpStatus: number | null;
  costMs: number | null;
  latenessMs: number | null;
  /** Cut to TASK_ERROR_MAX bytes here; any length may be passed. */
  error: string | null;
  /** Cut to TASK_OUTPUT_MAX bytes here; any length may be passed. */
  output: string | null;
  /** New claimed_by: the token for a settled fire (who settled it), null while waiting for a retry. */
  claimedBy: string | null;
  /** New claimed_until: null for a settled fire, retry time + lease while waiting for a retry. */
  claimedUntil: number | null;
}

/** A timer definition as the executor needs it: deleted and disabled ones included, with its app's secret. */
export interface TimerDefinition {
  timer: TimerEntity;
  /** The app's callback signing secret, null when callbacks are not signed. */
  signingSecret: string | null;
}

/** What one claim found: taken, or refused with the fire's state then (null: the fire has no row). */
export type ClaimResult = { claimed: true } | { claimed: false; state: FireState | null };

interface StateRow {
  timer_id?: string | number;
  run_at?: string | number;
  status: number;
  attempt: number;
  claimed_by: string | null;
  claimed_until: string | number | null;
}

function toState(r: StateRow): FireState {
  return {
    status: Number(r.status) as TaskStatusValue,
    attempt: Number(r.attempt),
    claimedBy: r.claimed_by,
    claimedUntil: r.claimed_until === null ? null : Number(r.claimed_until),
  };
}

const keyOf = (k: FireKey): string => `${BigInt(k.timerId)}:${k.runAt}`;

/** Key order (numeric timer id, then run_at): the order batches lock rows in. */
export function compareKeys(a: FireKey, b: FireKey): number {
  const x = BigInt(a.timerId);
  const y = BigInt(b.timerId);
  return x < y ? -1 : x > y ? 1 : a.runAt - b.runAt;
}

/** See {@link FireRepository.changesSince}. */
export interface DefinitionChanges {
  /** Pass back as `since` next time. */
  watermark: string;
  /** Ids of changed timers; null when there were too many to list. */
  timerIds: string[] | null;
  /** Apps whose signing secret (or anything else) changed. */
  apps: string[];
}

/** How far back each change poll looks again, for statements that committed after they ran. */
export const CHANGE_SLACK_SECONDS = 5;

/**
 * A batch as a derived table `(SELECT ? AS timer_id, ? AS run_at, ? AS <column>... UNION ALL ...)`,
 * one row per key with its values, for joining to `tasks` on uk_timer_run_at (eq_ref per row).
 */
function keyedValues(values: unknown[][], keys: FireKey[], columns: string[]): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const first = ['CAST(? AS UNSIGNED) AS timer_id', '? AS run_at', ...columns.map((c) => `? AS ${c}`)].join(', ');
  const rest = ['CAST(? AS UNSIGNED)', '?', ...columns.map(() => '?')].join(', ');
  const selects = keys.map((k, i) => {
    params.push(k.timerId, k.runAt, ...values[i]);
    return `SELECT ${i === 0 ? first : rest}`;
  });
  return { sql: `(${selects.join(' UNION ALL ')})`, params };
}

/** Most rows one outcome statement carries. */
export const OUTCOME_CHUNK = 500;

/** `fn` over consecutive chunks of OUTCOME_CHUNK items, one after the other; results in input order. */
async function inChunks<T, R>(items: T[], fn: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += OUTCOME_CHUNK) out.push(...(await fn(items.slice(i, i + OUTCOME_CHUNK))));
  return out;
}

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

/** A value that fits an INT / SMALLINT column, so a wild number never fails the write. */
function clampInt(v: number | null, min = INT_MIN, max = INT_MAX): number | null {
  if (v === null || !Number.isFinite(v)) return null;
  return Math.min(max, Math.max(min, Math.round(v)));
}

/**
 * The executor's view of the `tasks` table: the claim that fences duplicate deliveries, batched
 * outcome writes fenced by the claim, and the timer definitions it calls back with.
 */
@Injectable()
export class FireRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Takes the fire for delivery attempt `attempt` (m). It succeeds when the row is
   * - pending with attempt m-1 (first delivery: m = 1, attempt 0);
   * - running attempt m-1 and either waiting for this retry (claimed_by NULL, written by the
   *   previous attempt's outcome) or left by a holder whose lease expired;
   * - running attempt m with an expired lease: the holder died mid-delivery, this is its redelivery.
   * Returns false when the fire is settled, held (unexpired) by someone else, or not at this attempt.
   */
  async claim(c: FireClaimRequest): Promise<boolean> {
    const [result] = await this.claimMany([c]);
    return result.claimed;
  }

  /**
   * {@link claim} for many fires, {@link OUTCOME_CHUNK} per statement: one multi-table UPDATE joined to
   * the batch's values, rows locked in key order (so concurrent batches cannot deadlock each other).
   * When fewer rows matched than were asked for, one SELECT tells which claims hold (claimed_by is
   * the claim's unique token) and returns the state of the others, so the caller needs no extra read.
   */
  claimMany(claims: FireClaimRequest[]): Promise<ClaimResult[]> {
    return inChunks(claims, (chunk) => this.claimChunk(chunk));
  }

  private async claimChunk(chunk: FireClaimRequest[]): Promise<ClaimResult[]> {
    const valid = chunk.filter((c) => isId(c.timerId) && Number.isSafeInteger(c.runAt) && Number.isSafeInteger(c.attempt) && c.attempt >= 1);
    const byRequest = new Map<FireClaimRequest, ClaimResult>();
    const notValid: ClaimResult = { claimed: false, state: null };
    if (valid.length > 0) {
      const rows = [...valid].sort(compareKeys);
      const v = keyedValues(
        rows.map((c) => [c.attempt, c.token, c.nowMs + c.leaseMs, c.nowMs]),
        rows,
        ['attempt', 'token', 'claimed_until', 'now_ms'],
      );
      const result = await this.dataSource.query(
        `UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at
         SET t.status = ${TaskStatus.Running}, t.attempt = v.attempt, t.claimed_by = v.token, t.claimed_until = v.claimed_until
         WHERE (t.status = ${TaskStatus.Pending} AND t.attempt = v.attempt - 1)
            OR (t.status = ${TaskStatus.Running} AND t.attempt = v.attempt - 1 AND (t.claimed_by IS NULL OR COALESCE(t.claimed_until, 0) < v.now_ms))
            OR (t.status = ${TaskStatus.Running} AND t.attempt = v.attempt AND COALESCE(t.claimed_until, 0) < v.now_ms)`,
        v.params,
      );
      // mysql2 connects with CLIENT_FOUND_ROWS: every row of the batch matched at most once, so a
      // full count means every claim holds (a fire twice in one batch can match only once).
      if (affectedRows(result) >= rows.length) {
        for (const c of rows) byRequest.set(c, { claimed: true });
      } else {
        const states = await this.states(rows);
        for (const c of rows) {
          const s = states.get(keyOf(c)) ?? null;
          const claimed = s !== null && s.claimedBy === c.token && s.attempt === c.attempt && s.status === TaskStatus.Running;
          byRequest.set(c, claimed ? { claimed: true } : { claimed: false, state: s });
        }
      }
    }
    return chunk.map((c) => byRequest.get(c) ?? notValid);
  }

  /** Claim-relevant states of many fires in one query, by `timerId:runAt`; absent rows are missing. */
  private async states(keys: FireKey[]): Promise<Map<string, FireState>> {
    const v = keyedValues(keys.map(() => []), keys, []);
    const rows = (await this.dataSource.query(
      `SELECT DISTINCT t.timer_id, t.run_at, t.status, t.attempt, t.claimed_by, t.claimed_until
       FROM ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at`,
      v.params,
    )) as StateRow[];
    return new Map(rows.map((r) => [`${BigInt(String(r.timer_id))}:${Number(r.run_at)}`, toState(r)]));
  }

  /** The claim-relevant state of the fire, or null when it has no row. */
  /**
   * An operator replays a dead letter: its failed row becomes pending again at attempt 0, so the
   * replayed message claims it as a first attempt. Returns false when the row is not failed (already
   * replayed and delivered, or never failed): the claim then treats the message as a duplicate.
   */
  async reopenFailed(key: FireKey): Promise<boolean> {
    if (!isId(key.timerId) || !Number.isSafeInteger(key.runAt)) return false;
    const result = await this.dataSource.query(
      `UPDATE tasks SET status = ?, attempt = 0, claimed_by = NULL, claimed_until = NULL
       WHERE timer_id = CAST(? AS UNSIGNED) AND run_at = ? AND status = ?`,
      [TaskStatus.Pending, key.timerId, key.runAt, TaskStatus.Failed],
    );
    return affectedRows(result) > 0;
  }

  async state(key: FireKey): Promise<FireState | null> {
    if (!isId(key.timerId) || !Number.isSafeInteger(key.runAt)) return null;
    const rows = (await this.dataSource.query(
      'SELECT status, attempt, claimed_by, claimed_until FROM tasks WHERE timer_id = CAST(? AS UNSIGNED) AND run_at = ?',
      [key.timerId, key.runAt],
    )) as StateRow[];
    return rows[0] ? toState(rows[0]) : null;
  }

  /**
   * Writes outcomes, {@link OUTCOME_CHUNK} rows per statement, each only where the row is still held
   * by the outcome's claim (`claimed_by = token AND attempt = attempt`). Returns, per outcome in
   * order, whether it was written (false: the claim was lost to another executor meanwhile).
   * Error and output are truncated to their columns and numbers clamped, so no value fails the write.
   */
  recordOutcomes(outcomes: FireOutcome[]): Promise<boolean[]> {
    return inChunks(outcomes, (chunk) => this.recordChunk(chunk));
  }

  private async recordChunk(chunk: FireOutcome[]): Promise<boolean[]> {
    const valid = chunk.map((o) => isId(o.timerId) && Number.isSafeInteger(o.runAt));
    // Key order, as claims lock rows, so an outcome batch and a claim batch cannot deadlock.
    const rows = chunk.filter((_, i) => valid[i]).sort(compareKeys);
    if (rows.length === 0) return chunk.map(() => false);
    const v = keyedValues(
      rows.map((o) => [
        o.token,
        o.attempt,
        o.status,
        clampInt(o.httpStatus, -32_768, 32_767),
        clampInt(o.costMs),
        clampInt(o.latenessMs),
        truncateUtf8(o.error, TASK_ERROR_MAX),
        truncateUtf8(o.output, TASK_OUTPUT_MAX),
        o.claimedBy,
        o.claimedUntil,
      ]),
      rows,
      ['token', 'attempt', 'status', 'http_status', 'cost_ms', 'lateness_ms', 'error', 'output', 'claimed_by', 'claimed_until'],
    );
    // One multi-table UPDATE joined to the batch's values: an eq_ref lookup on uk_timer_run_at per row.
    const result = await this.dataSource.query(
      `UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at
       SET t.status = v.status, t.http_status = v.http_status, t.cost_ms = v.cost_ms, t.lateness_ms = v.lateness_ms,
           t.error = v.error, t.output = v.output, t.claimed_until = v.claimed_until, t.claimed_by = v.claimed_by
       WHERE t.claimed_by = v.token AND t.attempt = v.attempt`,
      v.params,
    );
    let rowApplied: boolean[];
    // mysql2 connects with CLIENT_FOUND_ROWS: affectedRows counts matched rows, changed or not.
    if (affectedRows(result) >= rows.length) {
      rowApplied = rows.map(() => true);
    } else {
      // Some claim was lost (rare): find out which rows now carry what this batch wrote.
      rowApplied = await Promise.all(
        rows.map(async (o) => {
          const s = await this.state(o);
          return (
            s !== null &&
            s.status === o.status &&
            s.attempt === o.attempt &&
            s.claimedBy === o.claimedBy &&
            s.claimedUntil === o.claimedUntil
          );
        }),
      );
    }
    const appliedByOutcome = new Map(rows.map((o, i) => [o, rowApplied[i]]));
    return chunk.map((o) => appliedByOutcome.get(o) ?? false);
  }

  /**
   * What changed since `since` (a watermark this method returned before; null on the first call):
   * timers (status, deletion) and apps (signing secret) whose updated_at is at or after it. Both
   * columns are set by the database clock, and the next watermark is the database's now minus
   * {@link CHANGE_SLACK_SECONDS}, so a statement that committed late is still seen. Returns null
   * for `timerIds` when more than `limit` timers changed (the caller should drop everything).
   */
  async changesSince(since: string | null, limit: number): Promise<DefinitionChanges> {
    const [{ watermark }] = (await this.dataSource.query(
      `SELECT DATE_FORMAT(NOW(3) - INTERVAL ${CHANGE_SLACK_SECONDS} SECOND, '%Y-%m-%d %H:%i:%s.%f') AS watermark`,
    )) as { watermark: string }[];
    if (since === null) return { watermark, timerIds: [], apps: [] };
    const timers = (await this.dataSource.query('SELECT id FROM timers WHERE updated_at >= ? ORDER BY updated_at LIMIT ?', [since, limit + 1])) as {
      id: string | number;
    }[];
    const apps = (await this.dataSource.query('SELECT app FROM apps WHERE updated_at >= ?', [since])) as { app: string }[];
    return {
      watermark,
      timerIds: timers.length > limit ? null : timers.map((r) => String(r.id)),
      apps: apps.map((r) => r.app),
    };
  }

  /** The timer `id` with its app's signing secret, deleted and disabled timers included; null when absent. */
  async definition(id: string): Promise<TimerDefinition | null> {
    if (!isId(id)) return null;
    const found = await this.definitionsWhere('t.id = CAST(:id AS UNSIGNED)', { id });
    return found[0] ?? null;
  }

  /**
   * Definitions (with secrets) of the timers that have pending fires with run_at in [fromMs, toMs),
   * at most `limit`, in one query: the executor's prefetch of what it will call soon.
   */
  async definitionsDueBetween(fromMs: number, toMs: number, limit: number): Promise<TimerDefinition[]> {
    if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs)) throw new RangeError('fromMs and toMs must be integers of epoch ms');
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    return this.definitionsWhere(
      't.id IN (SELECT k.timer_id FROM tasks k WHERE k.run_at >= :fromMs AND k.run_at < :toMs AND k.status = :pending)',
      { fromMs, toMs, pending: TaskStatus.Pending },
      limit,
    );
  }

  private async definitionsWhere(where: string, params: Record<string, unknown>, limit?: number): Promise<TimerDefinition[]> {
    const q = this.dataSource.manager
      .createQueryBuilder(TimerEntity, 't')
      .leftJoin(AppEntity, 'a', 'a.app = t.app')
      .addSelect('a.signing_secret', 'signing_secret')
      .where(where, params);
    if (limit !== undefined) q.limit(limit);
    const { entities, raw } = await q.getRawAndEntities<{ signing_secret: string | null }>();
    return entities.map((timer, i) => ({ timer, signingSecret: raw[i]?.signing_secret ?? null }));
  }
}
