import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OPEN_OUTCOME, TASK_OUTCOMES, TaskStatus } from '../entities/task.entity';
import { checkEpochMs } from './query-helpers';

/** Fires of one bucket of run_at, by outcome, and the lateness percentiles of those delivered. */
export interface FireBucket {
  /** Bucket start (epoch ms, a multiple of bucketMs). */
  start: number;
  fires: number;
  delivered: number;
  failed: number;
  missed: number;
  /** Pending or running. */
  open: number;
  /** Nearest-rank percentiles (PERCENTILE_DISC) of `lateness_ms` over the bucket's delivered fires; null without any. */
  latenessP50Ms: number | null;
  latenessP99Ms: number | null;
}

export interface FireOverview {
  /** Buckets holding at least one fire, ascending. */
  buckets: FireBucket[];
  /** Percentiles over every delivered fire read (see `latenessFires`). */
  latenessP50Ms: number | null;
  latenessP99Ms: number | null;
  /** Delivered fires the percentiles were taken over: the latest `latenessLimit` of the range at most. */
  latenessFires: number;
  /** True when the range held more delivered fires than `latenessLimit` (the oldest were left out). */
  latenessCapped: boolean;
}

export interface Backlog {
  /** Pending fires with run_at < now, counted up to `cap`. */
  pending: number;
  capped: boolean;
  /** The oldest of them (epoch ms), null when none. */
  oldestRunAt: number | null;
}

type Row = Record<string, string | number | null>;
const n = (v: string | number | null | undefined): number => Number(v ?? 0);
const orNull = (v: string | number | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * What the service did over a range of run_at, read from `tasks` alone (no metrics store): fires per
 * bucket by outcome, and lateness percentiles, for the api's overview. An app's fires go through
 * `idx_app_run_at_outcome (app, run_at, outcome)`, all apps' through `idx_outcome_run_at (outcome, run_at, ...)`
 * (one range per outcome): the counts are index-only; the percentiles read `lateness_ms` from the rows of the delivered fires,
 * the latest `latenessLimit` of them at most, so their cost is bounded whatever the range holds.
 */
@Injectable()
export class OverviewRepository {
  constructor(private readonly dataSource: DataSource) {}

  async fires(opts: { app?: string; fromMs: number; toMs: number; bucketMs: number; latenessLimit: number }): Promise<FireOverview> {
    checkEpochMs('fromMs', opts.fromMs);
    checkEpochMs('toMs', opts.toMs);
    if (!Number.isSafeInteger(opts.bucketMs) || opts.bucketMs < 1) throw new RangeError('bucketMs must be a positive integer');
    if (!Number.isSafeInteger(opts.latenessLimit) || opts.latenessLimit < 1) throw new RangeError('latenessLimit must be a positive integer');
    const { index, where, params } = rangeOf(opts);
    const counts: Row[] = await this.dataSource.query(
      `SELECT run_at DIV ? AS b, COUNT(*) AS fires, SUM(outcome = ?) AS delivered, SUM(outcome = ?) AS failed, SUM(outcome = ?) AS missed
       FROM tasks FORCE INDEX (${index}) WHERE ${where} GROUP BY b ORDER BY b`,
      [opts.bucketMs, TaskStatus.Succeeded, TaskStatus.Failed, TaskStatus.Missed, ...params],
    );
    // One pass over the latest delivered fires (newest first through the index, LIMIT bounds the row
    // reads): per-bucket and overall nearest-rank percentiles as MariaDB window functions.
    const pct: Row[] = await this.dataSource.query(
      `SELECT DISTINCT b,
              PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY lateness_ms) OVER (PARTITION BY b) AS p50,
              PERCENTILE_DISC(0.99) WITHIN GROUP (ORDER BY lateness_ms) OVER (PARTITION BY b) AS p99,
              PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY lateness_ms) OVER () AS all50,
              PERCENTILE_DISC(0.99) WITHIN GROUP (ORDER BY lateness_ms) OVER () AS all99,
              COUNT(*) OVER () AS total
       FROM (SELECT run_at DIV ? AS b, lateness_ms FROM tasks FORCE INDEX (${index})
             WHERE ${where} AND outcome = ? AND lateness_ms IS NOT NULL ORDER BY run_at DESC LIMIT ?) d`,
      [opts.bucketMs, ...params, TaskStatus.Succeeded, opts.latenessLimit],
    );
    const deliveredTotal = counts.reduce((sum, r) => sum + n(r.delivered), 0);
    const byBucket = new Map(pct.map((r) => [n(r.b), r]));
    return {
      buckets: counts.map((r) => {
        const b = n(r.b);
        const p = byBucket.get(b);
        const fires = n(r.fires);
        const [delivered, failed, missed] = [n(r.delivered), n(r.failed), n(r.missed)];
        return { start: b * opts.bucketMs, fires, delivered, failed, missed, open: fires - delivered - failed - missed, latenessP50Ms: orNull(p?.p50), latenessP99Ms: orNull(p?.p99) };
      }),
      latenessP50Ms: orNull(pct[0]?.all50),
      latenessP99Ms: orNull(pct[0]?.all99),
      latenessFires: n(pct[0]?.total),
      latenessCapped: deliveredTotal > opts.latenessLimit,
    };
  }

  /**
   * Pending fires due before `nowMs` (the backlog the executors have not claimed yet), up to `cap`, read
   * from the open rows of `idx_outcome_run_at` (pending or running in the row), however many finished
   * rows the table keeps.
   */
  async backlog(opts: { app?: string; nowMs: number; cap: number }): Promise<Backlog> {
    checkEpochMs('nowMs', opts.nowMs);
    if (!Number.isSafeInteger(opts.cap) || opts.cap < 1) throw new RangeError('cap must be a positive integer');
    const app = opts.app === undefined ? '' : ' AND app = ?';
    const rows: Row[] = await this.dataSource.query(
      `SELECT COUNT(*) AS c, MIN(run_at) AS oldest FROM (SELECT run_at FROM tasks FORCE INDEX (idx_outcome_run_at)
         WHERE outcome = ? AND run_at < ? AND status = ?${app} ORDER BY run_at LIMIT ?) x`,
      [OPEN_OUTCOME, opts.nowMs, TaskStatus.Pending, ...(opts.app === undefined ? [] : [opts.app]), opts.cap + 1],
    );
    const count = n(rows[0]?.c);
    return { pending: Math.min(count, opts.cap), capped: count > opts.cap, oldestRunAt: orNull(rows[0]?.oldest) };
  }
}

/** The run_at range of one app (or of all apps) and the index that reads it. */
function rangeOf(opts: { app?: string; fromMs: number; toMs: number }): { index: string; where: string; params: unknown[] } {
  if (opts.app === undefined) return { index: 'idx_outcome_run_at', where: `outcome IN (${TASK_OUTCOMES.join(', ')}) AND run_at >= ? AND run_at < ?`, params: [opts.fromMs, opts.toMs] };
  return { index: 'idx_app_run_at_outcome', where: 'app = ? AND run_at >= ? AND run_at < ?', params: [opts.app, opts.fromMs, opts.toMs] };
}
