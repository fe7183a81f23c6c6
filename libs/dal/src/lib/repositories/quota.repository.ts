import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { TaskStatus } from '../entities/task.entity';
import { checkEpochMs, managerOf } from './query-helpers';

/** An app's quotas as stored: null = the configured default. */
export interface StoredQuota {
  maxTimers: number | null;
  maxFiresPerMinute: number | null;
  minIntervalMs: number | null;
}

/** Pending fires per bucket: bucket start (epoch ms) -> fires. */
export type FireHistogram = Map<number, number>;

/**
 * Per-app quotas (apps.max_timers, max_fires_per_minute, min_interval_ms) and the usage they are
 * checked against: live timers, and pending fires per minute or second read from the task rows
 * (`idx_app_run_at` for one app, the covering `idx_run_at_status_timer` for all).
 */
@Injectable()
export class QuotaRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The app's quotas, row-locked (SELECT ... FOR UPDATE) until `manager`'s transaction ends; null when no such app. */
  async lockApp(app: string, manager: EntityManager): Promise<StoredQuota | null> {
    return this.read(app, manager, ' FOR UPDATE');
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

  /** The app's live (not deleted) timers, whatever their status. */
  async liveTimers(app: string, manager?: EntityManager): Promise<number> {
    const rows = (await managerOf(this.dataSource, manager).query('SELECT COUNT(*) AS n FROM timers WHERE app = ? AND live_name IS NOT NULL', [app])) as { n: string | number }[];
    return Number(rows[0].n);
  }

  /**
   * Pending fires in [fromMs, toMs) per bucket of `bucketMs`: of one timer, of one app, or of all apps
   * when neither is given; `exceptTimerId` leaves out a timer's fires (one being edited or enabled).
   */
  async pendingHistogram(
    opts: { app?: string; timerId?: string; fromMs: number; toMs: number; bucketMs: number; exceptTimerId?: string },
    manager?: EntityManager,
  ): Promise<FireHistogram> {
    checkEpochMs('fromMs', opts.fromMs);
    checkEpochMs('toMs', opts.toMs);
    if (!Number.isSafeInteger(opts.bucketMs) || opts.bucketMs < 1) throw new RangeError('bucketMs must be a positive integer');
    const where = ['run_at >= ?', 'run_at < ?', 'status = ?'];
    const params: unknown[] = [opts.fromMs, opts.toMs, TaskStatus.Pending];
    if (opts.timerId !== undefined) {
      where.unshift('timer_id = CAST(? AS UNSIGNED)');
      params.unshift(opts.timerId);
    } else if (opts.app !== undefined) {
      where.unshift('app = ?');
      params.unshift(opts.app);
    }
    if (opts.exceptTimerId !== undefined) {
      where.push('timer_id <> CAST(? AS UNSIGNED)');
      params.push(opts.exceptTimerId);
    }
    const index = opts.timerId !== undefined ? 'uk_timer_run_at' : opts.app !== undefined ? 'idx_app_run_at' : 'idx_run_at_status_timer';
    const rows = (await managerOf(this.dataSource, manager).query(
      `SELECT run_at DIV ? AS b, COUNT(*) AS n FROM tasks FORCE INDEX (${index}) WHERE ${where.join(' AND ')} GROUP BY b`,
      [opts.bucketMs, ...params],
    )) as { b: string | number; n: string | number }[];
    return new Map(rows.map((r) => [Number(r.b) * opts.bucketMs, Number(r.n)]));
  }

  private async read(app: string, manager: EntityManager, lock: string): Promise<StoredQuota | null> {
    const rows = (await manager.query(`SELECT max_timers, max_fires_per_minute, min_interval_ms FROM apps WHERE app = ?${lock}`, [app])) as {
      max_timers: string | number | null;
      max_fires_per_minute: string | number | null;
      min_interval_ms: string | number | null;
    }[];
    if (rows.length === 0) return null;
    const num = (v: string | number | null) => (v === null ? null : Number(v));
    return { maxTimers: num(rows[0].max_timers), maxFiresPerMinute: num(rows[0].max_fires_per_minute), minIntervalMs: num(rows[0].min_interval_ms) };
  }
}
