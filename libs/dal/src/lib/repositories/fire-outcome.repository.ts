import { Injectable } from '@nestjs/common';
import { FireRef } from '@timer/contracts';
import { DataSource } from 'typeorm';
import { ATTEMPT_ERROR_MAX, TASK_ATTEMPTS_KEPT, TASK_ERROR_MAX, TASK_OUTPUT_MAX, TaskAttemptResponse, TaskStatus, TaskStatusValue } from '../entities/task.entity';
import { truncateUtf8 } from '../truncate';
import { compareKeys, fireState, keyedValues, OUTCOME_CHUNK } from './fire-query-helpers';
import { affectedRows, isId } from './query-helpers';

/**
 * The outcome of one claimed attempt, written only while the claim is still the writer's (fenced on
 * `token` and `attempt`). `status` Running means "waiting for the next attempt".
 */
export interface FireOutcome extends FireRef {
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
  /**
   * When the attempt's callback started (epoch ms), for an attempt that called it: the attempt is then
   * appended to the fire's `attempts`. Absent or null for a fire recorded without a call (missed).
   */
  startedAt?: number | null;
  /** What the receiver answered, kept in the attempt's entry of `attempts` (with startedAt only); absent: nothing more is written. */
  response?: TaskAttemptResponse | null;
  /**
   * The attempt was claimed outside MySQL (a first attempt's claim in Redis, docs/pipeline.md): its row
   * is still pending at attempt - 1, and the write is fenced on that instead of on the token; it sets
   * the attempt. A row another executor settled or claimed meanwhile refuses it.
   */
  firstClaim?: boolean;
}

/**
 * Characters of kept answers (as JSON) one statement carries at most, beside OUTCOME_CHUNK rows:
 * well under MariaDB's default max_allowed_packet (16 MiB) whatever TIMER_RECORD_BODY_BYTES is.
 */
export const OUTCOME_RESPONSE_CHARS = 4 * 1_048_576;

const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

/** A value that fits an INT / SMALLINT column, so a wild number never fails the write. */
function clampInt(v: number | null, min = INT_MIN, max = INT_MAX): number | null {
  if (v === null || !Number.isFinite(v)) return null;
  return Math.min(max, Math.max(min, Math.round(v)));
}

/** The executor's outcome writes on `tasks` rows, batched and fenced by the claim. */
@Injectable()
export class FireOutcomeRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Writes outcomes, {@link OUTCOME_CHUNK} rows and at most {@link OUTCOME_RESPONSE_CHARS} of kept answers
   * per statement, each only where the row is still held by the outcome's claim
   * (`claimed_by = token AND attempt = attempt`; for a {@link FireOutcome.firstClaim}: still pending at
   * the attempt before). Returns, per outcome in
   * order, whether it was written (false: the claim was lost to another executor meanwhile).
   * Error and output are truncated to their columns and numbers clamped, so no value fails the write.
   */
  async recordOutcomes(outcomes: FireOutcome[]): Promise<boolean[]> {
    const out: boolean[] = [];
    let chunk: FireOutcome[] = [];
    let responses: (string | null)[] = [];
    let chars = 0;
    for (const o of outcomes) {
      const response = o.response && o.startedAt != null ? JSON.stringify(o.response) : null;
      if (chunk.length >= OUTCOME_CHUNK || (response !== null && chars + response.length > OUTCOME_RESPONSE_CHARS && chunk.length > 0)) {
        out.push(...(await this.recordChunk(chunk, responses)));
        chunk = [];
        responses = [];
        chars = 0;
      }
      chunk.push(o);
      responses.push(response);
      chars += response?.length ?? 0;
    }
    if (chunk.length > 0) out.push(...(await this.recordChunk(chunk, responses)));
    return out;
  }

  /**
   * Files the outcome of a first attempt claimed outside MySQL whose row is gone (its timer deleted or
   * disabled during the call) as a new row under `app`, in one INSERT, so the row is never seen pending;
   * false when a row exists again (then the fence decides). The attempt's entry is kept as the UPDATE keeps it.
   */
  async fileOutcome(o: FireOutcome, app: string): Promise<boolean> {
    if (!isId(o.timerId) || !Number.isSafeInteger(o.runAt)) return false;
    const fixed = o.status === TaskStatus.Succeeded && o.startedAt != null && !o.response;
    const error = truncateUtf8(o.error, TASK_ERROR_MAX);
    const entry =
      o.startedAt == null || fixed
        ? null
        : JSON.stringify([
            {
              attempt: o.attempt,
              startedAt: o.startedAt,
              httpStatus: clampInt(o.httpStatus, -32_768, 32_767),
              costMs: clampInt(o.costMs),
              error: error === null ? null : Array.from(error).slice(0, ATTEMPT_ERROR_MAX).join(''),
              ...(o.response ? { response: o.response } : {}),
            },
          ]);
    const result = await this.dataSource.query(
      `INSERT IGNORE INTO tasks (app, timer_id, run_at, status, attempt, http_status, cost_ms, lateness_ms, error, output, claimed_by, claimed_until, started_at, attempts)
       VALUES (?, CAST(? AS UNSIGNED), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        app,
        o.timerId,
        o.runAt,
        o.status,
        o.attempt,
        clampInt(o.httpStatus, -32_768, 32_767),
        clampInt(o.costMs),
        clampInt(o.latenessMs),
        error,
        truncateUtf8(o.output, TASK_OUTPUT_MAX),
        o.claimedBy,
        o.claimedUntil,
        fixed ? o.startedAt : null,
        entry,
      ],
    );
    return affectedRows(result) > 0;
  }

  private async recordChunk(chunk: FireOutcome[], responses: (string | null)[]): Promise<boolean[]> {
    const responseOf = new Map(chunk.map((o, i) => [o, responses[i]]));
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
        o.startedAt ?? null,
        responseOf.get(o) ?? null,
        o.firstClaim === true ? 1 : 0,
      ]),
      rows,
      ['token', 'attempt', 'status', 'http_status', 'cost_ms', 'lateness_ms', 'error', 'output', 'claimed_by', 'claimed_until', 'started_at', 'response', 'first_claim'],
    );
    // One multi-table UPDATE joined to the batch's values: an eq_ref lookup on uk_timer_run_at per row.
    // The attempt joins the fire's history in the same statement (the oldest dropped past
    // TASK_ATTEMPTS_KEPT), so the history costs no extra round trip; a fenced write appends nothing.
    // A success with no history yet (the common fire) writes only started_at, fixed width, and leaves
    // attempts NULL for the readers to rebuild (attemptsOf): the JSON and the row's growth were a
    // third of the outcome's MariaDB CPU. Both conditions read t.attempts as it was, whichever
    // assignment MariaDB applies first (the fixed case leaves it NULL). A kept answer
    // (docs/callback-answers.md) goes into the attempt's entry, so a success with one takes the JSON path.
    // A first attempt claimed in Redis finds its row pending at attempt 0, so this is the fire's only write.
    const fixed = `v.status = ${TaskStatus.Succeeded} AND v.started_at IS NOT NULL AND t.attempts IS NULL AND v.response IS NULL`;
    const entry = `JSON_OBJECT('attempt', v.attempt, 'startedAt', v.started_at, 'httpStatus', v.http_status, 'costMs', v.cost_ms, 'error', LEFT(v.error, ${ATTEMPT_ERROR_MAX}))`;
    const result = await this.dataSource.query(
      `UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at
       SET t.status = v.status, t.attempt = v.attempt, t.http_status = v.http_status, t.cost_ms = v.cost_ms, t.lateness_ms = v.lateness_ms,
           t.error = v.error, t.output = v.output, t.claimed_until = v.claimed_until, t.claimed_by = v.claimed_by,
           t.started_at = IF(${fixed}, v.started_at, t.started_at),
           t.attempts = IF(v.started_at IS NULL OR (${fixed}), t.attempts, JSON_ARRAY_APPEND(
             IF(JSON_LENGTH(t.attempts) >= ${TASK_ATTEMPTS_KEPT}, JSON_REMOVE(t.attempts, '$[0]'), COALESCE(t.attempts, '[]')), '$',
             IF(v.response IS NULL, ${entry}, JSON_INSERT(${entry}, '$.response', JSON_EXTRACT(v.response, '$')))))
       WHERE (v.first_claim = 0 AND t.claimed_by = v.token AND t.attempt = v.attempt)
          OR (v.first_claim = 1 AND t.status = ${TaskStatus.Pending} AND t.attempt = v.attempt - 1)`,
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
          const s = await fireState(this.dataSource, o);
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
}
