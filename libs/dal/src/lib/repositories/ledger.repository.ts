import { Injectable } from '@nestjs/common';
import { FireRef } from '@timer/contracts';
import { DataSource } from 'typeorm';
import { TaskStatus, TaskStatusValue } from '../entities/task.entity';
import { checkEpochMs } from './query-helpers';

/** A fire past its time that nobody is working on. */
export interface OverdueFire extends FireRef {
  status: TaskStatusValue;
  attempt: number;
  claimedBy: string | null;
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


/**
 * MySQL as the ledger of fires (invariant 8): the fires past their time that no live claim covers
 * (the reconciler's work list), how many there are, and what became of each window's fires.
 * Reads `tasks` through `(status, run_at)` and `(app, run_at, status)`.
 */
@Injectable()
export class LedgerRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Oldest first, at most `limit`: pending fires with run_at < `dueBefore`, and running fires with
   * run_at < `dueBefore` whose claim (or pending retry) expired before `nowMs`.
   */
  async overdue(dueBefore: number, nowMs: number, limit: number): Promise<OverdueFire[]> {
    checkEpochMs('dueBefore', dueBefore);
    checkEpochMs('nowMs', nowMs);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    const rows: Row[] = await this.dataSource.query(
      `(SELECT timer_id, run_at, status, attempt, claimed_by FROM tasks
         WHERE status = ? AND run_at < ? ORDER BY run_at LIMIT ?)
       UNION ALL
       (SELECT timer_id, run_at, status, attempt, claimed_by FROM tasks
         WHERE status = ? AND run_at < ? AND COALESCE(claimed_until, 0) < ? ORDER BY run_at LIMIT ?)
       ORDER BY run_at LIMIT ?`,
      [TaskStatus.Pending, dueBefore, limit, TaskStatus.Running, dueBefore, nowMs, limit, limit],
    );
    return rows.map((r) => ({
      timerId: String(r.timer_id),
      runAt: n(r.run_at),
      status: n(r.status) as TaskStatusValue,
      attempt: n(r.attempt),
      claimedBy: r.claimed_by === null ? null : String(r.claimed_by),
    }));
  }

  /** Pending fires with run_at < `dueBefore`, counted up to `cap` (the count stays cheap when huge). */
  async countPendingBefore(dueBefore: number, cap: number): Promise<number> {
    return this.countOpen([TaskStatus.Pending], dueBefore, cap);
  }

  /** Pending or running fires with run_at < `before` (e.g. the start of the current window), up to `cap`. */
  async countOpenBefore(before: number, cap: number): Promise<number> {
    return this.countOpen([TaskStatus.Pending, TaskStatus.Running], before, cap);
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
              SUM(status = ?) AS delivered, SUM(status = ?) AS failed, SUM(status = ?) AS missed,
              SUM(status IN (?, ?)) AS open
       FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ?
       GROUP BY w ORDER BY w`,
      [windowMs, windowMs, TaskStatus.Succeeded, TaskStatus.Failed, TaskStatus.Missed, TaskStatus.Pending, TaskStatus.Running, app, fromMs, toMs],
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

  private async countOpen(statuses: TaskStatusValue[], before: number, cap: number): Promise<number> {
    checkEpochMs('before', before);
    if (!Number.isSafeInteger(cap) || cap < 1) throw new RangeError('cap must be a positive integer');
    const rows: Row[] = await this.dataSource.query(
      `SELECT COUNT(*) AS c FROM (SELECT 1 FROM tasks WHERE status IN (${statuses.map(() => '?').join(', ')}) AND run_at < ? LIMIT ?) x`,
      [...statuses, before, cap],
    );
    return n(rows[0]?.c);
  }
}
