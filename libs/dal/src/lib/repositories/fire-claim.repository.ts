import { Injectable } from '@nestjs/common';
import { FireRef } from '@timer/contracts';
import { DataSource } from 'typeorm';
import { TaskStatus } from '../entities/task.entity';
import { compareKeys, FireState, fireState, inChunks, keyedValues, keyOf, StateRow, toState } from './fire-query-helpers';
import { affectedRows, isId } from './query-helpers';

/** What the executor asks for when it takes a fire for one delivery attempt. */
export interface FireClaimRequest extends FireRef {
  /** 1-based attempt the claimer is about to deliver. */
  attempt: number;
  /** Unique per claim (not just per process): the fence every later write of this claim carries. */
  token: string;
  nowMs: number;
  /** The claim is held until nowMs + leaseMs; after that another executor may take it over. */
  leaseMs: number;
}

/** What one claim found: taken, or refused with the fire's state then (null: the fire has no row). */
export type ClaimResult = { claimed: true } | { claimed: false; state: FireState | null };

/**
 * The executor's claims on `tasks` rows: the claim that fences duplicate deliveries, the claim state
 * of a fire, and the reopening of a failed fire for a replay.
 */
@Injectable()
export class FireClaimRepository {
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

  /**
   * The states of many fires, in the order asked (null: no row), {@link OUTCOME_CHUNK} per query; a
   * plain read, no row lock. For a caller that expects most of them settled and would otherwise claim.
   */
  stateMany(keys: FireRef[]): Promise<(FireState | null)[]> {
    return inChunks(keys, async (chunk) => {
      const isValid = (k: FireRef) => isId(k.timerId) && Number.isSafeInteger(k.runAt);
      const valid = chunk.filter(isValid);
      const states = valid.length > 0 ? await this.states(valid) : new Map<string, FireState>();
      return chunk.map((k) => (isValid(k) ? (states.get(keyOf(k)) ?? null) : null));
    });
  }

  /** Claim-relevant states of many fires in one query, by `timerId:runAt`; absent rows are missing. */
  private async states(keys: FireRef[]): Promise<Map<string, FireState>> {
    const v = keyedValues(keys.map(() => []), keys, []);
    const rows = (await this.dataSource.query(
      `SELECT DISTINCT t.timer_id, t.run_at, t.status, t.attempt, t.claimed_by, t.claimed_until
       FROM ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at`,
      v.params,
    )) as StateRow[];
    return new Map(rows.map((r) => [`${BigInt(String(r.timer_id))}:${Number(r.run_at)}`, toState(r)]));
  }

  /**
   * Takes over the claim `holder` has on the fire (whatever its lease says): only while `holder` still
   * holds it (same token, running, at this attempt or the one before), so two takers cannot both win
   * and the holder's own late writes stay fenced. The caller has established that the holder is dead.
   */
  async takeOver(c: FireClaimRequest, holder: string): Promise<boolean> {
    if (!isId(c.timerId) || !Number.isSafeInteger(c.runAt) || !Number.isSafeInteger(c.attempt) || c.attempt < 1) return false;
    const result = await this.dataSource.query(
      `UPDATE tasks SET attempt = ?, claimed_by = ?, claimed_until = ?
       WHERE timer_id = CAST(? AS UNSIGNED) AND run_at = ? AND status = ? AND claimed_by = ? AND attempt IN (?, ?)`,
      [c.attempt, c.token, c.nowMs + c.leaseMs, c.timerId, c.runAt, TaskStatus.Running, holder, c.attempt - 1, c.attempt],
    );
    return affectedRows(result) > 0;
  }

  /**
   * An operator replays a dead letter: its failed row becomes pending again at attempt 0, so the
   * replayed message claims it as a first attempt. Returns false when the row is not failed (already
   * replayed and delivered, or never failed): the claim then treats the message as a duplicate.
   * A letter the app had purged from its list is listed again should the replay fail again.
   */
  async reopenFailed(key: FireRef): Promise<boolean> {
    if (!isId(key.timerId) || !Number.isSafeInteger(key.runAt)) return false;
    const result = await this.dataSource.query(
      `UPDATE tasks SET status = ?, attempt = 0, claimed_by = NULL, claimed_until = NULL, dlq_purged_at = NULL
       WHERE timer_id = CAST(? AS UNSIGNED) AND run_at = ? AND status = ?`,
      [TaskStatus.Pending, key.timerId, key.runAt, TaskStatus.Failed],
    );
    return affectedRows(result) > 0;
  }

  /**
   * Moves the lease of a claim this executor holds (same token, running) to `untilMs`: for a fire
   * that waits its turn under the overlap policy `buffer_one`. False when the claim passed on.
   */
  async extend(key: FireRef, token: string, untilMs: number): Promise<boolean> {
    if (!isId(key.timerId) || !Number.isSafeInteger(key.runAt)) return false;
    const result = await this.dataSource.query(
      'UPDATE tasks SET claimed_until = ? WHERE timer_id = CAST(? AS UNSIGNED) AND run_at = ? AND status = ? AND claimed_by = ?',
      [untilMs, key.timerId, key.runAt, TaskStatus.Running, token],
    );
    return affectedRows(result) > 0;
  }

  /** The claim-relevant state of the fire, or null when it has no row. */
  state(key: FireRef): Promise<FireState | null> {
    return fireState(this.dataSource, key);
  }
}
