import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { OPEN_OUTCOME } from '../entities/task.entity';
import { affectedRows, checkEpochMs, managerOf } from './query-helpers';

/** An app's quotas as stored: null = the configured default. */
export interface StoredQuota {
  maxTimers: number | null;
  maxFiresPerMinute: number | null;
  minIntervalMs: number | null;
  /** The app's live timers (`apps.live_timers`) as read with the quotas; ignored by {@link QuotaRepository.set}. */
  liveTimers?: number | null;
}

/** Open (pending or running) fires per bucket: bucket start (epoch ms) -> fires. */
export type FireHistogram = Map<number, number>;

/** The largest spread offset a timer can have (its `jitterMs` bound, JITTER_MAX_MS). */
const MAX_SPREAD_OFFSET_MS = 3_600_000;

/**
 * Per-app quotas (apps.max_timers, max_fires_per_minute, min_interval_ms) and the usage they are
 * checked against: live timers, and open (pending or running) fires per minute or second read from the
 * task rows (the covering `idx_app_run_at_outcome` for one app, `idx_outcome_run_at` for all), each counted at
 * the time it is delivered: run_at plus its timer's spread offset (`autoSpread`).
 */
@Injectable()
export class QuotaRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The app's quotas, row-locked (SELECT ... FOR UPDATE) until `manager`'s transaction ends; null when no such app. */
  async lockApp(app: string, manager: EntityManager): Promise<StoredQuota | null> {
    return this.read(app, manager, ' FOR UPDATE');
  }

  /**
   * A create's lock when {@link tryAddLiveTimer} added nothing (to tell why): adds the new timer (or a batch's `added`) to the app's `live_timers` (which takes the row lock until
   * `manager`'s transaction ends; a rollback takes it away again) and returns the app's quotas with
   * its live timers, this one included. Null when no such app.
   */
  async lockAppAdding(app: string, manager: EntityManager, added = 1): Promise<{ quota: StoredQuota; liveTimers: number } | null> {
    await manager.query('UPDATE apps SET live_timers = live_timers + ?, updated_at = updated_at WHERE app = ?', [added, app]);
    const rows = (await manager.query('SELECT max_timers, max_fires_per_minute, min_interval_ms, live_timers FROM apps WHERE app = ? FOR UPDATE', [app])) as QuotaRow[];
    return rows.length === 0 ? null : { quota: quotaOf(rows[0]), liveTimers: Number(rows[0].live_timers) };
  }

  /**
   * A create's lock in one statement: adds the new timer (or a batch's `added`) to the app's `live_timers` only while the app
   * stays within its maxTimers (its own, else `defaultMaxTimers`; 0 = no limit). The row lock it takes is
   * held until `manager`'s transaction ends, so it is the last statement before the commit. False when
   * nothing was added: no such app, or the app is at its maxTimers ({@link lockAppAdding} tells which).
   */
  async tryAddLiveTimer(app: string, defaultMaxTimers: number, manager: EntityManager, added = 1): Promise<boolean> {
    const result = await manager.query(
      'UPDATE apps SET live_timers = live_timers + ?, updated_at = updated_at WHERE app = ? AND (COALESCE(max_timers, ?) = 0 OR live_timers + ? <= COALESCE(max_timers, ?))',
      [added, app, defaultMaxTimers, added, defaultMaxTimers],
    );
    return affectedRows(result) > 0;
  }

  /** A delete's part: one live timer fewer (in `manager`'s transaction, under the app's row lock). */
  async removeLiveTimer(app: string, manager: EntityManager): Promise<void> {
    await manager.query('UPDATE apps SET live_timers = live_timers - 1, updated_at = updated_at WHERE app = ? AND live_timers > 0', [app]);
  }

  async find(app: string): Promise<StoredQuota | null> {
    return this.read(app, this.dataSource.manager, '');
  }

  /** Sets the app's quotas (null = default). `updated_at` is kept: the executors' caches poll it and a quota changes no delivery. */
  async set(app: string, q: StoredQuota, manager?: EntityManager): Promise<void> {
    await managerOf(this.dataSource, manager).query(
      'UPDATE apps SET max_timers = ?, max_fires_per_minute = ?, min_interval_ms = ?, updated_at = updated_at WHERE app = ?',
      [q.maxTimers, q.maxFiresPerMinute, q.minIntervalMs, app],
    );
  }

  /** The app's live (not deleted) timers, whatever their status, counted (what `apps.live_timers` keeps). */
  async liveTimers(app: string, manager?: EntityManager): Promise<number> {
    const rows = (await managerOf(this.dataSource, manager).query('SELECT COUNT(*) AS n FROM timers WHERE app = ? AND live_name IS NOT NULL', [app])) as { n: string | number }[];
    return Number(rows[0].n);
  }

  /**
   * Open (pending or running) fires delivered in [fromMs, toMs) per bucket of `bucketMs`: of one timer, of one app, or of
   * all apps when neither is given; `exceptTimerId` leaves out a timer's fires (one being edited or
   * enabled). A fire is counted at run_at plus its timer's `spread_offset_ms` (autoSpread): the scan
   * by run_at is corrected by the fires of the few timers with an offset (`idx_spread_offset`), in the
   * same statement (admission runs this under the app's row lock: one round trip, not two).
   * With `buckets` (bucket starts), the scan reads only those buckets' run_at ranges and the result is
   * exact for those buckets only: an admission of a timer with a few fires needs the load of the
   * minutes they land in, not a scan of every pending fire of the app.
   */
  async pendingHistogram(opts: HistogramOptions, manager?: EntityManager): Promise<FireHistogram> {
    checkEpochMs('fromMs', opts.fromMs);
    checkEpochMs('toMs', opts.toMs);
    if (!Number.isSafeInteger(opts.bucketMs) || opts.bucketMs < 1) throw new RangeError('bucketMs must be a positive integer');
    const scan = byRunAt(opts);
    const shifts = spreadShifts(opts);
    const rows = (await managerOf(this.dataSource, manager).query(`${scan.sql} UNION ALL ${shifts.sql}`, [...scan.params, ...shifts.params])) as {
      shift: string | number;
      b0: string | number;
      b1: string | number | null;
      counted: string | number;
      lands: string | number;
      n: string | number;
    }[];
    const out: FireHistogram = new Map();
    for (const r of rows) if (Number(r.shift) === 0) out.set(Number(r.b0) * opts.bucketMs, Number(r.n));
    for (const s of rows) {
      if (Number(s.shift) === 0) continue;
      // Moved from the bucket of run_at (when the scan counted it) to the bucket of its delivery (when in range).
      if (Number(s.counted) === 1) add(out, Number(s.b0) * opts.bucketMs, -Number(s.n));
      if (Number(s.lands) === 1) add(out, Number(s.b1) * opts.bucketMs, Number(s.n));
    }
    return out;
  }

  private async read(app: string, manager: EntityManager, lock: string): Promise<StoredQuota | null> {
    const rows = (await manager.query(`SELECT max_timers, max_fires_per_minute, min_interval_ms, live_timers FROM apps WHERE app = ?${lock}`, [app])) as QuotaRow[];
    return rows.length === 0 ? null : { ...quotaOf(rows[0]), liveTimers: rows[0].live_timers === undefined || rows[0].live_timers === null ? null : Number(rows[0].live_timers) };
  }
}

type QuotaRow = { max_timers: string | number | null; max_fires_per_minute: string | number | null; min_interval_ms: string | number | null; live_timers?: string | number | null };

function quotaOf(r: QuotaRow): StoredQuota {
  const num = (v: string | number | null) => (v === null ? null : Number(v));
  return { maxTimers: num(r.max_timers), maxFiresPerMinute: num(r.max_fires_per_minute), minIntervalMs: num(r.min_interval_ms) };
}

function add(h: FireHistogram, at: number, n: number): void {
  const v = (h.get(at) ?? 0) + n;
  if (v === 0) h.delete(at);
  else h.set(at, v);
}

/** Whose pending fires, in which range and buckets: see {@link QuotaRepository.pendingHistogram}. */
export interface HistogramOptions {
  app?: string;
  timerId?: string;
  fromMs: number;
  toMs: number;
  bucketMs: number;
  exceptTimerId?: string;
  /** Bucket starts (multiples of bucketMs): only these buckets are scanned. */
  buckets?: readonly number[];
}

/** Whose fires a histogram counts: one timer, one app or all, less the timer `exceptTimerId`. */
function scopeOf(opts: HistogramOptions, timerColumn: string, appColumn: string): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.timerId !== undefined) {
    where.push(`${timerColumn} = CAST(? AS UNSIGNED)`);
    params.push(opts.timerId);
  } else if (opts.app !== undefined) {
    where.push(`${appColumn} = ?`);
    params.push(opts.app);
  }
  if (opts.exceptTimerId !== undefined) {
    where.push(`${timerColumn} <> CAST(? AS UNSIGNED)`);
    params.push(opts.exceptTimerId);
  }
  return { where, params };
}

/** The pending fires per bucket of run_at (`shift` 0), in the columns of {@link spreadShifts}. */
function byRunAt(opts: HistogramOptions): { sql: string; params: unknown[] } {
  const scope = scopeOf(opts, 'timer_id', 'app');
  const where = ['outcome = ?', 'run_at >= ?', 'run_at < ?', ...scope.where];
  const params: unknown[] = [OPEN_OUTCOME, opts.fromMs, opts.toMs, ...scope.params];
  if (opts.buckets !== undefined) {
    where.push(opts.buckets.length === 0 ? 'FALSE' : `(${opts.buckets.map(() => '(run_at >= ? AND run_at < ?)').join(' OR ')})`);
    for (const b of opts.buckets) {
      checkEpochMs('buckets', b);
      params.push(b, b + opts.bucketMs);
    }
  }
  const index = opts.timerId !== undefined ? 'uk_timer_run_at' : opts.app !== undefined ? 'idx_app_run_at_outcome' : 'idx_outcome_run_at';
  return {
    sql: `(SELECT 0 AS shift, run_at DIV ? AS b0, NULL AS b1, 1 AS counted, 0 AS lands, COUNT(*) AS n FROM tasks FORCE INDEX (${index}) WHERE ${where.join(' AND ')} GROUP BY b0)`,
    params: [opts.bucketMs, ...params],
  };
}

/**
 * The pending fires of timers with a spread offset (`shift` 1), grouped by the bucket of run_at (`b0`,
 * `counted` by the scan when run_at >= fromMs) and of run_at + offset (`b1`, `lands` when before toMs).
 */
function spreadShifts(opts: HistogramOptions): { sql: string; params: unknown[] } {
  const scope = scopeOf(opts, 't.id', 't.app');
  const where = ['t.spread_offset_ms > 0', 'k.run_at >= ? - t.spread_offset_ms', 'k.run_at >= ?', 'k.run_at < ?', 'k.outcome = ?', ...scope.where];
  const params: unknown[] = [opts.fromMs, opts.fromMs - MAX_SPREAD_OFFSET_MS, opts.toMs, OPEN_OUTCOME, ...scope.params];
  return {
    sql: `(SELECT 1 AS shift, k.run_at DIV ? AS b0, (k.run_at + t.spread_offset_ms) DIV ? AS b1, k.run_at >= ? AS counted, k.run_at + t.spread_offset_ms < ? AS lands, COUNT(*) AS n
       FROM timers t FORCE INDEX (idx_spread_offset) JOIN tasks k FORCE INDEX (uk_timer_run_at) ON k.timer_id = t.id
       WHERE ${where.join(' AND ')} GROUP BY b0, b1, counted, lands)`,
    params: [opts.bucketMs, opts.bucketMs, opts.fromMs, opts.toMs, ...params],
  };
}
