import { Injectable } from '@nestjs/common';
import type { CalendarRules } from '@timer/schedule';
import { DataSource, EntityManager } from 'typeorm';
import { TaskStatus } from '../entities/task.entity';
import { FailureWebhook } from '../entities/app.entity';
import { NotifyHttpParam, TimerEntity, TimerStatus, TimerStatusValue } from '../entities/timer.entity';
import { DuplicateTimerNameError, isDuplicateKeyError } from '../errors';
import { affectedRows, checkEpochMs, idMatches, isId, likeContains, managerOf, pageOffset } from './query-helpers';

/** What creating a timer needs; the schedule must already be validated (@timer/schedule). */
export interface NewTimer {
  app: string;
  name: string;
  cron?: string | null;
  runAt?: number | null;
  everyMs?: number | null;
  timeZone?: string;
  /** `shift` (default) or `skip`; `first` (default) or `both` (cron only). */
  dstGap?: string;
  dstOverlap?: string;
  startAt?: number | null;
  endAt?: number | null;
  maxFires?: number | null;
  /** The last instant a fire may have (TimerEntity.finalAt); the caller computes it. */
  finalAt?: number | null;
  notifyHttpParam: NotifyHttpParam;
  /** Default disabled (1). */
  status?: TimerStatusValue;
  maxAttempts?: number;
  backoffMs?: number;
  misfirePolicy?: string;
  overlapPolicy?: string;
  catchupPolicy?: string | null;
  catchupWindowMs?: number | null;
  jitterMs?: number;
  failureWebhook?: FailureWebhook | null;
  resultWebhook?: FailureWebhook | null;
  autoSpread?: boolean;
  spreadOffsetMs?: number | null;
  /** Names of the app's calendars (docs/calendars.md), their definitions as of the write, and `onExcluded` (default `skip`). */
  calendars?: string[] | null;
  calendarRules?: CalendarRules[] | null;
  onExcluded?: string;
  /**
   * Inserted enabled, as a create then an enable leave it (status enabled, version 2, `next_fire_at`,
   * this spread offset instead of `spreadOffsetMs`): a batch create with `enable` (insertMany).
   */
  enabled?: EnabledState;
}

/** The fields an edit replaces (everything but the id, the app, the status and the bookkeeping). */
export interface TimerFields {
  name: string;
  cron: string | null;
  runAt: number | null;
  everyMs: number | null;
  timeZone: string;
  /** DST choices of a cron (`shift`/`skip`, `first`/`both`); the defaults elsewhere. */
  dstGap: string;
  dstOverlap: string;
  startAt: number | null;
  endAt: number | null;
  maxFires: number | null;
  /** Derived from the schedule and the bounds when the definition is written (TimerEntity.finalAt). */
  finalAt: number | null;
  notifyHttpParam: NotifyHttpParam;
  maxAttempts: number;
  backoffMs: number;
  misfirePolicy: string;
  /** Fire policies (docs/behaviour.md, "Fire policies"). */
  overlapPolicy: string;
  catchupPolicy: string | null;
  catchupWindowMs: number | null;
  jitterMs: number;
  /** The timer's own failure webhook; null = the app's. */
  failureWebhook: FailureWebhook | null;
  /** Where each final answer of the callback is POSTed; absent or null: nowhere. */
  resultWebhook?: FailureWebhook | null;
  /** Admission may spread the fires within `jitterMs`; absent: false. */
  autoSpread?: boolean;
  /** The delay admission chose for every fire (with `autoSpread`); absent or null: none (the hash-derived jitter). */
  spreadOffsetMs?: number | null;
  /** Calendar names; absent or null: none. `calendarRules` is derived from them when the definition is written. */
  calendars?: string[] | null;
  calendarRules?: CalendarRules[] | null;
  /** `skip` (absent), `nextBusinessDay` or `previousBusinessDay`. */
  onExcluded?: string;
}

/** What an enable sets besides the status: the spread offset admission chose and the first fire after those written. */
export interface EnabledState {
  spreadOffsetMs: number | null;
  nextFireAt: number | null;
}

/** Where the completion sweep stands in `idx_status_final`. */
export interface FinishedCursor {
  finalAt: number;
  id: string;
}

/** An enabled timer whose final fire instant passed. */
export interface FinishedCandidate extends FinishedCursor {
  app: string;
}

/** Where a read of the timers due in a window stands in `idx_status_next_fire`. */
export interface DueCursor {
  nextFireAt: number;
  id: string;
}

/** A timer's new `next_fire_at`, applied only while its version is still `version`. */
export interface NextFireAdvance {
  id: string;
  version: number;
  nextFireAt: number | null;
}

export interface TimerListOptions {
  page: number;
  size: number;
  /** Substring of the name; `%` and `_` match themselves. */
  name?: string;
  status?: TimerStatusValue;
}

/** Timer definitions. Every method is scoped to an app: another app's id is never found or changed. */
@Injectable()
export class TimerRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Inserts a live timer; throws DuplicateTimerNameError when the app has a live timer of that name. */
  async create(t: NewTimer, manager?: EntityManager): Promise<TimerEntity> {
    const m = managerOf(this.dataSource, manager);
    const id = await this.insert(t, m);
    return m.createQueryBuilder(TimerEntity, 't').where('t.id = CAST(:id AS UNSIGNED)', { id }).getOneOrFail();
  }

  /** Like `create`, returning only the new id: one statement instead of an insert and a read-back. */
  async insert(t: NewTimer, manager?: EntityManager): Promise<string> {
    const m = managerOf(this.dataSource, manager);
    try {
      const result = await m.createQueryBuilder().insert().into(TimerEntity).values(rowOf(t)).updateEntity(false).execute();
      return String((result.raw as { insertId: number | string }).insertId);
    } catch (e) {
      if (isDuplicateKeyError(e)) throw new DuplicateTimerNameError(t.app, t.name);
      throw e;
    }
  }

  /**
   * Inserts live timers of one app (names distinct) in one multi-row statement and returns their ids
   * in the order given, read back by name (one indexed read: ids of a multi-row insert are consecutive
   * only under some auto-increment lock modes). Throws DuplicateTimerNameError when a name is taken
   * ({@link liveNames} tells which). Timers with `enabled` are inserted enabled (no update after).
   */
  async insertMany(app: string, ts: NewTimer[], manager: EntityManager): Promise<string[]> {
    if (ts.length === 0) return [];
    if (ts.some((t) => t.app !== app)) throw new RangeError('insertMany: every timer must be of the app given');
    try {
      // Plain SQL: the query builder's parameter bookkeeping cost the api CPU on every row
      // (docs/benchmarks.md, "Measurements behind the code").
      const rows = ts.map(rowValues);
      await manager.query(
        `INSERT INTO timers (${INSERT_COLUMNS.join(', ')}) VALUES ${rows.map((r) => `(${r.map((v) => (v === undefined ? 'DEFAULT' : '?')).join(', ')})`).join(', ')}`,
        rows.flat().filter((v) => v !== undefined),
      );
    } catch (e) {
      if (isDuplicateKeyError(e)) throw new DuplicateTimerNameError(app, ts.map((t) => t.name).join(', '));
      throw e;
    }
    const byName = await this.liveNames(app, ts.map((t) => t.name), manager);
    return ts.map((t) => {
      const id = byName.get(t.name);
      if (id === undefined) throw new Error(`insertMany: timer ${JSON.stringify(t.name)} of app ${app} not found after its insert`);
      return id;
    });
  }

  /** Of `names`, those a live timer of `app` has, with its id. */
  async liveNames(app: string, names: string[], manager?: EntityManager): Promise<Map<string, string>> {
    if (names.length === 0) return new Map();
    const rows = (await managerOf(this.dataSource, manager).query(`SELECT id, live_name FROM timers WHERE app = ? AND live_name IN (${names.map(() => '?').join(', ')})`, [
      app,
      ...names,
    ])) as { id: string | number; live_name: string }[];
    return new Map(rows.map((r) => [r.live_name, String(r.id)]));
  }

  /** The live (not deleted) timer `id` of `app`, else null. */
  async findLive(app: string, id: string, manager?: EntityManager): Promise<TimerEntity | null> {
    if (!isId(id)) return null;
    return managerOf(this.dataSource, manager)
      .createQueryBuilder(TimerEntity, 't')
      .where('t.id = CAST(:id AS UNSIGNED) AND t.app = :app AND t.deletedAt IS NULL', { id, app })
      .getOne();
  }

  /** Whether `app` has or had (deleted since) the timer `id`: its fire records stay readable. */
  async existed(app: string, id: string): Promise<boolean> {
    if (!isId(id)) return false;
    const rows = (await this.dataSource.query('SELECT 1 FROM timers WHERE id = CAST(? AS UNSIGNED) AND app = ? LIMIT 1', [id, app])) as unknown[];
    return rows.length > 0;
  }

  /**
   * The live timer `id` of `app`, locked FOR UPDATE until the transaction of `manager` ends (for
   * enable/disable racing each other). Null when absent.
   */
  async findLiveForUpdate(app: string, id: string, manager: EntityManager): Promise<TimerEntity | null> {
    if (!isId(id)) return null;
    return manager
      .createQueryBuilder(TimerEntity, 't')
      .setLock('pessimistic_write')
      .where('t.id = CAST(:id AS UNSIGNED) AND t.app = :app AND t.deletedAt IS NULL', { id, app })
      .getOne();
  }

  /** A page of the app's live timers, newest first (id DESC, a stable order), with the total count. */
  async list(app: string, opts: TimerListOptions): Promise<{ items: TimerEntity[]; total: number }> {
    const offset = pageOffset(opts);
    const q = this.dataSource.manager.createQueryBuilder(TimerEntity, 't').where('t.app = :app AND t.deletedAt IS NULL', { app });
    if (opts.name !== undefined && opts.name !== '') q.andWhere(`t.name LIKE :name ESCAPE '!'`, { name: likeContains(opts.name) });
    if (opts.status !== undefined) q.andWhere('t.status = :status', { status: opts.status });
    const [items, total] = await q.orderBy('t.id', 'DESC').skip(offset).take(opts.size).getManyAndCount();
    return { items, total };
  }

  /** Sets the status of a live timer (and bumps its version); false when the app has no such live timer. */
  async setStatus(app: string, id: string, status: TimerStatusValue, manager?: EntityManager): Promise<boolean> {
    if (!isId(id)) return false;
    // Completed is the completion sweep's (`complete`), which checks that no fire is left.
    if (status !== TimerStatus.Disabled && status !== TimerStatus.Enabled) throw new RangeError(`invalid timer status ${String(status)}`);
    const result = await managerOf(this.dataSource, manager).query(
      'UPDATE timers SET status = ?, version = version + 1 WHERE id = CAST(? AS UNSIGNED) AND app = ? AND deleted_at IS NULL',
      [status, id, app],
    );
    return affectedRows(result) > 0;
  }

  /**
   * Enables a live timer in one statement (an enable, under its row lock): status, version, the spread
   * offset admission chose and its next fire after the fires the enable wrote. False when absent.
   */
  async markEnabled(app: string, id: string, set: EnabledState, manager?: EntityManager): Promise<boolean> {
    return (await this.markEnabledMany(app, [{ id, ...set }], manager)) > 0;
  }

  /** {@link markEnabled} of several live timers of `app` in one statement; returns how many were enabled. */
  async markEnabledMany(app: string, timers: (EnabledState & { id: string })[], manager?: EntityManager): Promise<number> {
    const valid = timers.filter((t) => isId(t.id));
    if (valid.length === 0) return 0;
    const cases = (pick: (t: EnabledState) => number | null) => ({
      sql: `CASE id ${valid.map(() => 'WHEN CAST(? AS UNSIGNED) THEN ?').join(' ')} END`,
      params: valid.flatMap((t) => [t.id, pick(t)]),
    });
    const spread = cases((t) => t.spreadOffsetMs);
    const next = cases((t) => t.nextFireAt);
    const result = await managerOf(this.dataSource, manager).query(
      `UPDATE timers SET status = ?, version = version + 1, spread_offset_ms = ${spread.sql}, next_fire_at = ${next.sql}
       WHERE ${idMatches(valid.length)} AND app = ? AND deleted_at IS NULL`,
      [TimerStatus.Enabled, ...spread.params, ...next.params, ...valid.map((t) => t.id), app],
    );
    return affectedRows(result);
  }

  /**
   * Sets the spread offsets admission chose for timers inserted enabled in this transaction (a batch
   * create, `NewTimer.enabled`) whose offset differs from the one inserted; the version stays.
   */
  async setSpreadOffsets(app: string, timers: { id: string; spreadOffsetMs: number | null }[], manager: EntityManager): Promise<number> {
    const valid = timers.filter((t) => isId(t.id));
    if (valid.length === 0) return 0;
    const result = await manager.query(
      `UPDATE timers SET spread_offset_ms = CASE id ${valid.map(() => 'WHEN CAST(? AS UNSIGNED) THEN ?').join(' ')} END
       WHERE ${idMatches(valid.length)} AND app = ? AND deleted_at IS NULL`,
      [...valid.flatMap((t) => [t.id, t.spreadOffsetMs]), ...valid.map((t) => t.id), app],
    );
    return affectedRows(result);
  }

  /**
   * Replaces the definition of a live timer and bumps its version; false when the app has no such
   * live timer. Throws DuplicateTimerNameError when another live timer of the app has the new name.
   */
  async update(app: string, id: string, f: TimerFields, manager?: EntityManager): Promise<boolean> {
    if (!isId(id)) return false;
    try {
      const result = await managerOf(this.dataSource, manager).query(
        `UPDATE timers SET name = ?, live_name = ?, cron = ?, run_at = ?, every_ms = ?, time_zone = ?, dst_gap = ?, dst_overlap = ?, start_at = ?, end_at = ?, max_fires = ?, final_at = ?,
           notify_http_param = ?, max_attempts = ?, backoff_ms = ?, misfire_policy = ?,
           overlap_policy = ?, catchup_policy = ?, catchup_window_ms = ?, jitter_ms = ?, failure_webhook = ?, result_webhook = ?, auto_spread = ?, spread_offset_ms = ?,
           calendars = ?, calendar_rules = ?, on_excluded = ?, version = version + 1
         WHERE id = CAST(? AS UNSIGNED) AND app = ? AND deleted_at IS NULL`,
        [
          f.name,
          f.name,
          f.cron,
          f.runAt,
          f.everyMs,
          f.timeZone,
          f.dstGap,
          f.dstOverlap,
          f.startAt,
          f.endAt,
          f.maxFires,
          f.finalAt,
          JSON.stringify(f.notifyHttpParam),
          f.maxAttempts,
          f.backoffMs,
          f.misfirePolicy,
          f.overlapPolicy,
          f.catchupPolicy,
          f.catchupWindowMs,
          f.jitterMs,
          f.failureWebhook === null ? null : JSON.stringify(f.failureWebhook),
          f.resultWebhook ? JSON.stringify(f.resultWebhook) : null,
          f.autoSpread ?? false,
          f.spreadOffsetMs ?? null,
          f.calendars?.length ? JSON.stringify(f.calendars) : null,
          f.calendars?.length && f.calendarRules ? JSON.stringify(f.calendarRules) : null,
          f.onExcluded ?? 'skip',
          id,
          app,
        ],
      );
      return affectedRows(result) > 0;
    } catch (e) {
      if (isDuplicateKeyError(e)) throw new DuplicateTimerNameError(app, f.name);
      throw e;
    }
  }

  /** The current version of each of the timers `ids` (deleted ones included), by id. */
  async versionsOf(ids: string[]): Promise<Map<string, number>> {
    const valid = ids.filter(isId);
    if (valid.length === 0) return new Map();
    const rows = (await this.dataSource.query(
      `SELECT id, version FROM timers WHERE id IN (${valid.map(() => 'CAST(? AS UNSIGNED)').join(', ')})`,
      valid,
    )) as { id: string | number; version: number }[];
    return new Map(rows.map((r) => [String(r.id), Number(r.version)]));
  }

  /**
   * Soft-deletes a live timer: live_name = NULL (the name becomes reusable), deleted_at = now (ms),
   * status disabled, version bumped. False when the app has no such live timer.
   */
  async softDelete(app: string, id: string, manager?: EntityManager, nowMs: number = Date.now()): Promise<boolean> {
    if (!isId(id)) return false;
    const result = await managerOf(this.dataSource, manager).query(
      'UPDATE timers SET live_name = NULL, deleted_at = ?, status = ?, version = version + 1 WHERE id = CAST(? AS UNSIGNED) AND app = ? AND deleted_at IS NULL',
      [nowMs, TimerStatus.Disabled, id, app],
    );
    return affectedRows(result) > 0;
  }

  /**
   * Enabled live timers whose final fire instant (`final_at`) is before `beforeMs`, ordered by
   * (final_at, id) after the cursor `after`, at most `limit`: a range of `idx_status_final`. The
   * completion sweep's candidates.
   */
  async finishedCandidates(beforeMs: number, after: FinishedCursor | null, limit: number): Promise<FinishedCandidate[]> {
    checkEpochMs('beforeMs', beforeMs);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    const [cursorSql, cursorArgs] = after === null ? ['', []] : [' AND (final_at > ? OR (final_at = ? AND id > CAST(? AS UNSIGNED)))', [after.finalAt, after.finalAt, after.id]];
    const rows = (await this.dataSource.query(
      `SELECT CAST(id AS CHAR) AS id, app, final_at AS finalAt FROM timers FORCE INDEX (idx_status_final)
       WHERE status = ? AND final_at < ? AND deleted_at IS NULL${cursorSql} ORDER BY final_at, id LIMIT ?`,
      [TimerStatus.Enabled, beforeMs, ...cursorArgs, limit],
    )) as { id: string; app: string; finalAt: string | number }[];
    return rows.map((r) => ({ id: r.id, app: r.app, finalAt: Number(r.finalAt) }));
  }

  /**
   * Marks an enabled timer completed (status 3, version bumped) when, under its row lock in `manager`'s
   * transaction: its final instant is before `beforeMs`; no fire of it is open (pending or running,
   * a retry included); and no migrator run can still create fires at that instant (the migrator
   * window holding it is completed, or the instant is before `expandableFromMs`, behind the catch-up).
   * False when any of that does not hold.
   */
  async completeIfSettled(id: string, beforeMs: number, expandableFromMs: number, manager: EntityManager): Promise<boolean> {
    if (!isId(id)) return false;
    const [timer] = (await manager.query('SELECT status, final_at AS finalAt FROM timers WHERE id = CAST(? AS UNSIGNED) AND deleted_at IS NULL FOR UPDATE', [
      id,
    ])) as { status: number; finalAt: string | number | null }[];
    if (!timer || timer.status !== TimerStatus.Enabled || timer.finalAt === null || Number(timer.finalAt) >= beforeMs) return false;
    const finalAt = Number(timer.finalAt);
    if (finalAt >= expandableFromMs) {
      const [w] = (await manager.query('SELECT window_end AS e FROM migrator_windows WHERE window_start <= ? ORDER BY window_start DESC LIMIT 1', [finalAt])) as {
        e: string | number;
      }[];
      if (!w || Number(w.e) <= finalAt) return false;
    }
    // Newest first on the timer's own rows: an open fire is almost always among its latest.
    const open = (await manager.query(
      'SELECT 1 FROM tasks FORCE INDEX (uk_timer_run_at) WHERE timer_id = CAST(? AS UNSIGNED) AND status IN (?, ?) ORDER BY run_at DESC LIMIT 1',
      [id, TaskStatus.Pending, TaskStatus.Running],
    )) as unknown[];
    if (open.length > 0) return false;
    await manager.query('UPDATE timers SET status = ?, version = version + 1 WHERE id = CAST(? AS UNSIGNED)', [TimerStatus.Completed, id]);
    return true;
  }

  /** Sets a live timer's `next_fire_at` (the caller created every fire before it), without touching `updated_at`. */
  async setNextFireAt(id: string, nextFireAt: number | null, manager?: EntityManager): Promise<void> {
    if (!isId(id)) return;
    await managerOf(this.dataSource, manager).query('UPDATE timers SET next_fire_at = ?, updated_at = updated_at WHERE id = CAST(? AS UNSIGNED)', [nextFireAt, id]);
  }

  /**
   * Enabled live timers with 0 < next_fire_at < `beforeMs`, in (next_fire_at, id) order after `after`,
   * at most `limit`, optionally only ids in (afterId, upToId]: a range of `idx_status_next_fire` (the
   * id filter is read from the index too, the rows only for the matches). The timers with a fire in
   * a window; rows advanced past `beforeMs` meanwhile leave the range.
   */
  async duePage(beforeMs: number, after: DueCursor | null, limit: number, ids?: { afterId: string | null; upToId?: string }): Promise<TimerEntity[]> {
    checkEpochMs('beforeMs', beforeMs);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    if (ids?.afterId != null && !isId(ids.afterId)) throw new RangeError(`invalid afterId ${JSON.stringify(ids.afterId)}`);
    if (ids?.upToId !== undefined && !isId(ids.upToId)) throw new RangeError(`invalid upToId ${JSON.stringify(ids.upToId)}`);
    const q = this.dataSource.manager
      .createQueryBuilder(TimerEntity, 't')
      .useIndex('idx_status_next_fire')
      .where('t.status = :status AND t.nextFireAt > 0 AND t.nextFireAt < :beforeMs AND t.deletedAt IS NULL', { status: TimerStatus.Enabled, beforeMs });
    if (after !== null) {
      q.andWhere('(t.nextFireAt > :cursorAt OR (t.nextFireAt = :cursorAt AND t.id > CAST(:cursorId AS UNSIGNED)))', { cursorAt: after.nextFireAt, cursorId: after.id });
    }
    if (ids?.afterId != null) q.andWhere('t.id > CAST(:afterId AS UNSIGNED)', { afterId: ids.afterId });
    if (ids?.upToId !== undefined) q.andWhere('t.id <= CAST(:upToId AS UNSIGNED)', { upToId: ids.upToId });
    return q.orderBy('t.nextFireAt', 'ASC').addOrderBy('t.id', 'ASC').limit(limit).getMany();
  }

  /**
   * Ids cutting the timers due before `beforeMs` (as in `duePage`) into consecutive id ranges of
   * `size`, at most `max` (none when all fit one range): one index-only read of the due timers.
   */
  async dueBoundaries(beforeMs: number, size: number, max: number): Promise<string[]> {
    checkEpochMs('beforeMs', beforeMs);
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError('size must be a positive integer');
    // A boundary closes a full range only when a timer follows it: otherwise the rest is one range.
    const rows = (await this.dataSource.query(
      `SELECT CAST(id AS CHAR) AS boundary FROM (
         SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n, COUNT(*) OVER () AS total
         FROM timers FORCE INDEX (idx_status_next_fire) WHERE status = ? AND next_fire_at > 0 AND next_fire_at < ?
       ) due WHERE n % ? = 0 AND n < total ORDER BY id LIMIT ?`,
      [TimerStatus.Enabled, beforeMs, size, max],
    )) as { boundary: string }[];
    return rows.map((r) => r.boundary);
  }

  /**
   * Applies the migrator's advances of `next_fire_at` in one statement, each only while the timer's
   * version is the one its fires were computed from (an edit, enable or disable since then set its
   * own) and only forward (another replica may have expanded a later window meanwhile). Never
   * touches `updated_at`. Returns the rows changed.
   */
  async advanceNextFire(advances: NextFireAdvance[]): Promise<number> {
    const valid = advances.filter((a) => isId(a.id));
    if (valid.length === 0) return 0;
    const rows = valid.map(() => 'SELECT CAST(? AS UNSIGNED) AS id, ? AS v, CAST(? AS SIGNED) AS n').join(' UNION ALL ');
    const result = await this.dataSource.query(
      `UPDATE timers t JOIN (${rows}) a ON t.id = a.id
       SET t.next_fire_at = a.n, t.updated_at = t.updated_at
       WHERE t.version = a.v AND t.status = ? AND (a.n IS NULL OR t.next_fire_at < a.n)`,
      [...valid.flatMap((a) => [a.id, a.version, a.nextFireAt]), TimerStatus.Enabled],
    );
    return affectedRows(result);
  }

  /**
   * Resolves `next_fire_at` = 0 (not known: rows from before the column, rows inserted without it) of
   * enabled timers to `fromMs`, at most `limit` rows (one short statement through the index); the
   * migrator repeats it until it returns less than `limit`.
   */
  async resolveUnknownNextFire(fromMs: number, limit: number): Promise<number> {
    checkEpochMs('fromMs', fromMs);
    const result = await this.dataSource.query('UPDATE timers SET next_fire_at = ?, updated_at = updated_at WHERE status = ? AND next_fire_at = 0 LIMIT ?', [
      fromMs,
      TimerStatus.Enabled,
      limit,
    ]);
    return affectedRows(result);
  }
}

/** The row values of a new timer, its defaults filled in. */
function rowOf(t: NewTimer) {
  return {
    app: t.app,
    name: t.name,
    liveName: t.name,
    cron: t.cron ?? null,
    runAt: t.runAt ?? null,
    everyMs: t.everyMs ?? null,
    timeZone: t.timeZone ?? 'UTC',
    dstGap: t.dstGap ?? 'shift',
    dstOverlap: t.dstOverlap ?? 'first',
    startAt: t.startAt ?? null,
    endAt: t.endAt ?? null,
    maxFires: t.maxFires ?? null,
    finalAt: t.finalAt ?? (t.cron || t.everyMs ? null : (t.runAt ?? null)),
    notifyHttpParam: t.notifyHttpParam,
    status: t.enabled ? TimerStatus.Enabled : (t.status ?? TimerStatus.Disabled),
    ...(t.enabled ? { version: 2, nextFireAt: t.enabled.nextFireAt } : {}),
    ...(t.maxAttempts !== undefined ? { maxAttempts: t.maxAttempts } : {}),
    ...(t.backoffMs !== undefined ? { backoffMs: t.backoffMs } : {}),
    ...(t.misfirePolicy !== undefined ? { misfirePolicy: t.misfirePolicy } : {}),
    ...(t.overlapPolicy !== undefined ? { overlapPolicy: t.overlapPolicy } : {}),
    catchupPolicy: t.catchupPolicy ?? null,
    catchupWindowMs: t.catchupWindowMs ?? null,
    ...(t.jitterMs !== undefined ? { jitterMs: t.jitterMs } : {}),
    failureWebhook: t.failureWebhook ?? null,
    resultWebhook: t.resultWebhook ?? null,
    autoSpread: t.autoSpread ?? false,
    spreadOffsetMs: t.enabled ? t.enabled.spreadOffsetMs : (t.spreadOffsetMs ?? null),
    calendars: t.calendars?.length ? t.calendars : null,
    calendarRules: t.calendars?.length ? (t.calendarRules ?? null) : null,
    onExcluded: t.onExcluded ?? 'skip',
  };
}

/** The columns {@link rowValues} gives, in its order (created_at and updated_at take their defaults). */
const INSERT_COLUMNS = [
  'app', 'name', 'live_name', 'cron', 'run_at', 'every_ms', 'time_zone', 'dst_gap', 'dst_overlap', 'start_at', 'end_at', 'max_fires', 'final_at', 'notify_http_param', 'status',
  'max_attempts', 'backoff_ms', 'misfire_policy', 'overlap_policy', 'catchup_policy', 'catchup_window_ms', 'jitter_ms', 'failure_webhook', 'result_webhook', 'auto_spread', 'spread_offset_ms', 'version', 'next_fire_at',
  'calendars', 'calendar_rules', 'on_excluded',
];

/** {@link rowOf} as the values of {@link INSERT_COLUMNS}, as the entity stores them (JSON text, 0/1); undefined: the column's default. */
function rowValues(t: NewTimer): (string | number | null | undefined)[] {
  const r = rowOf(t);
  return [
    r.app, r.name, r.liveName, r.cron, r.runAt, r.everyMs, r.timeZone, r.dstGap, r.dstOverlap, r.startAt, r.endAt, r.maxFires, r.finalAt, JSON.stringify(r.notifyHttpParam), r.status,
    r.maxAttempts, r.backoffMs, r.misfirePolicy, r.overlapPolicy, r.catchupPolicy, r.catchupWindowMs, r.jitterMs, r.failureWebhook === null ? null : JSON.stringify(r.failureWebhook),
    r.resultWebhook === null ? null : JSON.stringify(r.resultWebhook),
    r.autoSpread ? 1 : 0, r.spreadOffsetMs, r.version, r.nextFireAt,
    r.calendars === null ? null : JSON.stringify(r.calendars), r.calendarRules === null ? null : JSON.stringify(r.calendarRules), r.onExcluded,
  ];
}
