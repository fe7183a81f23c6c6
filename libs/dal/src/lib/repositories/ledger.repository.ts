import { Injectable } from '@nestjs/common';
import { FireRef } from '@timer/contracts';
import { DataSource } from 'typeorm';
import { OPEN_OUTCOME, TaskStatus, TaskStatusValue } from '../entities/task.entity';
import { affectedRows, checkEpochMs } from './query-helpers';

/** A fire past its time that nobody is working on. */
export interface OverdueFire extends FireRef {
  status: TaskStatusValue;
  attempt: number;
  claimedBy: string | null;
  /** A backfill's fire: re-published as one (`TaskMessage.backfill`). */
  backfill?: boolean;
}

/** One window of an app's fires: how many exist, and how many are settled and how. */
export interface WindowAccount {
  windowStart: number;
  windowEnd: number;
  expected: number;
  delivered: number;
  failed: number;
  missed: number;
  /** Pending or running: not settled yet. */
  open: number;
}

type Row = Record<string, string | number | null>;
const n = (v: string | number | null | undefined): number => Number(v ?? 0);

/** The `error` of a fire that fell in its app's pause (docs/behaviour.md, "Pause"). */
export const PAUSED_REASON = 'paused';

/**
 * A fire in its app's pause window (latest pause, `apps.paused_at` <= run_at < `apps.resumed_at`,
 * open-ended while it lasts, for pauses that ended at or after the parameter). Such fires are
 * settled in bulk as `paused`, never re-published.
 */
const IN_PAUSE = `EXISTS (SELECT 1 FROM apps a WHERE a.app = t.app AND a.paused_at IS NOT NULL AND t.run_at >= a.paused_at
  AND (a.resumed_at IS NULL OR (t.run_at < a.resumed_at AND a.resumed_at >= ?)))`;

/**
 * MySQL as the ledger of fires (invariant 8): the fires past their time that no live claim covers
 * (the reconciler's work list), how many there are, and what became of each window's fires.
 * Reads `tasks` through `idx_outcome_run_at (outcome, run_at, timer_id)` and `(app, run_at, outcome)`.
 * No index holds `status` (a claim, pending -> running, moves no index entry): pending and running are
 * told apart in the row, on ranges of open rows bounded by a limit or a cap.
 */
@Injectable()
export class LedgerRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Oldest first, at most `limit`: pending fires with run_at < `dueBefore`, and running fires with
   * run_at < `dueBefore` whose claim (or pending retry) expired before `nowMs`. Pending fires in their
   * app's pause window are left out (settled by {@link missPaused}), including windows of pauses that
   * ended at or after `pauseEndedSince` (default: every ended pause is left out).
   */
  async overdue(dueBefore: number, nowMs: number, limit: number, pauseEndedSince = 0): Promise<OverdueFire[]> {
    checkEpochMs('dueBefore', dueBefore);
    checkEpochMs('nowMs', nowMs);
    checkEpochMs('pauseEndedSince', pauseEndedSince);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    // One walk of the open rows, oldest first, that stops at the limit: what it reads past the fires it
    // returns is the running fires with a live claim and the pending ones in a pause. Pending and running
    // as two ranges of the open rows, the running one read the whole overdue backlog for its few expired
    // claims (1-2 s a pass at 5,000/s behind).
    const rows: Row[] = await this.dataSource.query(OVERDUE_SQL, [OPEN_OUTCOME, dueBefore, TaskStatus.Pending, pauseEndedSince, TaskStatus.Running, nowMs, limit]);
    return rows.map((r) => ({
      timerId: String(r.timer_id),
      runAt: n(r.run_at),
      status: n(r.status) as TaskStatusValue,
      attempt: n(r.attempt),
      claimedBy: r.claimed_by === null ? null : String(r.claimed_by),
      backfill: n(r.backfill) === 1,
    }));
  }

  /**
   * Records the app's pending fires with fromMs <= run_at < toMs missed with the reason
   * {@link PAUSED_REASON}, oldest first, at most `limit` in this one statement. Reads the open rows
   * of the range alone (every app's: app and status are in the row), so a long pause whose earlier
   * fires are settled costs nothing. Returns how many it settled (`limit`: there may be more).
   */
  async missPaused(app: string, fromMs: number, toMs: number, limit: number): Promise<number> {
    checkEpochMs('fromMs', fromMs);
    checkEpochMs('toMs', toMs);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    if (fromMs >= toMs) return 0;
    const result = await this.dataSource.query(
      MISS_PAUSED_SQL,
      [TaskStatus.Missed, PAUSED_REASON, OPEN_OUTCOME, fromMs, toMs, TaskStatus.Pending, app, limit],
    );
    return affectedRows(result);
  }

  /** Pending fires with run_at < `dueBefore`, counted up to `cap` (the count stays cheap when huge). */
  async countPendingBefore(dueBefore: number, cap: number): Promise<number> {
    return this.countOpen(TaskStatus.Pending, dueBefore, cap);
  }

  /** Pending or running fires with run_at < `before` (e.g. the start of the current window), up to `cap`. */
  async countOpenBefore(before: number, cap: number): Promise<number> {
    return this.countOpen(null, before, cap);
  }

  /**
   * An app's fires in [fromMs, toMs) per UTC-aligned window of `windowMs`: expected (every fire that
   * exists), delivered, failed, missed and still open. Windows without fires are left out.
   */
  async accounting(app: string, fromMs: number, toMs: number, windowMs: number): Promise<WindowAccount[]> {
    checkEpochMs('fromMs', fromMs);
    checkEpochMs('toMs', toMs);
    if (!Number.isSafeInteger(windowMs) || windowMs < 1) throw new RangeError('windowMs must be a positive integer');
    const rows: Row[] = await this.dataSource.query(
      `SELECT FLOOR(run_at / ?) * ? AS w, COUNT(*) AS expected,
              SUM(outcome = ?) AS delivered, SUM(outcome = ?) AS failed, SUM(outcome = ?) AS missed,
              SUM(outcome = ?) AS open
       FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ?
       GROUP BY w ORDER BY w`,
      [windowMs, windowMs, TaskStatus.Succeeded, TaskStatus.Failed, TaskStatus.Missed, OPEN_OUTCOME, app, fromMs, toMs],
    );
    return rows.map((r) => ({
      windowStart: n(r.w),
      windowEnd: n(r.w) + windowMs,
      expected: n(r.expected),
      delivered: n(r.delivered),
      failed: n(r.failed),
      missed: n(r.missed),
      open: n(r.open),
    }));
  }

  /** Open fires with run_at < `before` (of `status` alone when given, read from the row), up to `cap`. */
  private async countOpen(status: TaskStatusValue | null, before: number, cap: number): Promise<number> {
    checkEpochMs('before', before);
    if (!Number.isSafeInteger(cap) || cap < 1) throw new RangeError('cap must be a positive integer');
    const rows: Row[] = await this.dataSource.query(countOpenSql(status !== null), [OPEN_OUTCOME, before, ...(status === null ? [] : [status]), cap]);
    return n(rows[0]?.c);
  }
}

/**
 * The reconciler's overdue fires (parameters: open outcome, dueBefore, pending, pauseEndedSince, running,
 * nowMs, limit). Named index: where most rows are open the optimizer may prefer a scan of the table.
 */
export const OVERDUE_SQL = `SELECT timer_id, run_at, status, attempt, claimed_by, backfill FROM tasks t FORCE INDEX (idx_outcome_run_at)
  WHERE outcome = ? AND run_at < ?
    AND ((status = ? AND NOT ${IN_PAUSE}) OR (status = ? AND COALESCE(claimed_until, 0) < ?))
  ORDER BY run_at, timer_id LIMIT ?`;

/** {@link LedgerRepository.missPaused}'s statement (parameters: missed, reason, open outcome, fromMs, toMs, pending, app, limit). */
export const MISS_PAUSED_SQL =
  'UPDATE tasks FORCE INDEX (idx_outcome_run_at) SET status = ?, error = ? WHERE outcome = ? AND run_at >= ? AND run_at < ? AND status = ? AND app = ? ORDER BY run_at LIMIT ?';

/** Open fires before a time, up to a cap (parameters: open outcome, before, [status,] cap): index-only without the status. */
export function countOpenSql(byStatus: boolean): string {
  return `SELECT COUNT(*) AS c FROM (SELECT 1 FROM tasks FORCE INDEX (idx_outcome_run_at) WHERE outcome = ? AND run_at < ?${byStatus ? ' AND status = ?' : ''} LIMIT ?) x`;
}
