import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { FINISHED_TASK_STATUSES, TaskEntity, TaskStatus, TaskStatusValue } from '../entities/task.entity';
import { affectedRows, checkEpochMs, deleteInBatches, isId, managerOf, PageOptions, pageOffset } from './query-helpers';

/** One fire to pre-create. */
export interface NewTask {
  app: string;
  timerId: string;
  /** Epoch ms. */
  runAt: number;
  /** A fire a calendar excludes: written missed with this error (`calendar <name>`), never delivered. */
  excluded?: string;
}

/** Rows per INSERT statement in {@link TaskRepository.insertIgnore}. */
export const INSERT_CHUNK = 1000;
/** Rows per DELETE statement in {@link TaskRepository.deletePendingAfter}. */
export const DELETE_CHUNK = 5000;

/**
 * The `error` of a fire an edit replaced: recorded missed, never deleted, so a message already on its
 * way finds a settled row (the executor does not deliver it, and does not re-create it either).
 */
export const SUPERSEDED_PREFIX = 'superseded by version ';
/** The `error` of a fire a calendar excluded (`calendar <name>`): recorded missed when it is written. */
export const CALENDAR_PREFIX = 'calendar ';
/** Missed fires that a regeneration may make pending again: superseded by an edit or excluded by a calendar. */
const REOPENABLE = `(error LIKE '${SUPERSEDED_PREFIX}%' OR error LIKE '${CALENDAR_PREFIX}%')`;

/** A stored fire of one timer, as an edit sees it. */
export interface StoredFire {
  runAt: number;
  status: TaskStatusValue;
  /** Recorded missed because an earlier edit replaced it or a calendar excluded it ({@link SUPERSEDED_PREFIX}, {@link CALENDAR_PREFIX}). */
  superseded: boolean;
  /** Its error when missed by a calendar (`calendar <name>`). */
  excluded?: string;
}

/** Which fire records {@link TaskRepository.records} reads: one app's, narrowed by what is given. */
export interface RecordsFilter {
  app: string;
  /** One timer's (deleted or not). */
  timerId?: string;
  /** One fire's (with timerId): its run_at. */
  runAt?: number;
  status?: TaskStatusValue;
  /** fromMs <= run_at (epoch ms). */
  fromMs?: number;
  /** run_at < toMs (epoch ms). */
  toMs?: number;
  /** Future pending fires (pending with run_at > nowMs) are left out unless this is true. */
  includePending: boolean;
  nowMs: number;
}

/** Fires (task rows) of timers. */
@Injectable()
export class TaskRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Inserts pending fires, skipping those that exist (unique timer_id, run_at), in statements of
   * {@link INSERT_CHUNK} rows. Returns how many rows were inserted. Idempotent.
   */
  async insertIgnore(rows: NewTask[], manager?: EntityManager): Promise<number> {
    for (const r of rows) {
      // INSERT IGNORE would turn a bad value into a warning and a clamped row: refuse it up front.
      if (!isId(r.timerId)) throw new RangeError(`invalid timerId ${JSON.stringify(r.timerId)}`);
      if (!Number.isSafeInteger(r.runAt)) throw new RangeError(`invalid runAt ${String(r.runAt)}`);
      if (typeof r.app !== 'string' || r.app.length === 0 || r.app.length > 64) throw new RangeError(`invalid app ${JSON.stringify(r.app)}`);
    }
    const m = managerOf(this.dataSource, manager);
    let inserted = 0;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const chunk = rows.slice(i, i + INSERT_CHUNK);
      const params: (string | number | null)[] = [];
      const anyExcluded = chunk.some((r) => r.excluded !== undefined);
      for (const r of chunk) {
        params.push(r.app, r.timerId, r.runAt);
        if (anyExcluded) params.push(r.excluded === undefined ? TaskStatus.Pending : TaskStatus.Missed, r.excluded ?? null);
      }
      const result = await m.query(
        anyExcluded
          ? `INSERT IGNORE INTO tasks (app, timer_id, run_at, status, error) VALUES ${chunk.map(() => '(?, CAST(? AS UNSIGNED), ?, ?, ?)').join(', ')}`
          : `INSERT IGNORE INTO tasks (app, timer_id, run_at) VALUES ${chunk.map(() => '(?, CAST(? AS UNSIGNED), ?)').join(', ')}`,
        params,
      );
      inserted += affectedRows(result);
    }
    return inserted;
  }

  /** Deletes the timer's pending fires (status 0) and leaves every other record. Returns the count. */
  async deletePending(timerId: string, manager?: EntityManager): Promise<number> {
    if (!isId(timerId)) return 0;
    const result = await managerOf(this.dataSource, manager).query('DELETE FROM tasks WHERE timer_id = CAST(? AS UNSIGNED) AND status = ?', [
      timerId,
      TaskStatus.Pending,
    ]);
    return affectedRows(result);
  }

  /**
   * Deletes the timer's pending fires with afterMs < run_at (< beforeMs when given): a disabled timer
   * keeps no fire that is not due. {@link DELETE_CHUNK} rows per statement until none is left. Under
   * REPEATABLE READ the range scan on uk_timer_run_at locks the gaps too: no fire of the timer can be
   * inserted there until the transaction of `manager` ends. Returns how many it deleted.
   */
  async deletePendingAfter(timerId: string, afterMs: number, manager: EntityManager, beforeMs?: number): Promise<number> {
    if (!isId(timerId)) return 0;
    checkEpochMs('afterMs', afterMs);
    if (beforeMs !== undefined) checkEpochMs('beforeMs', beforeMs);
    const bound = beforeMs === undefined ? '' : ' AND run_at < ?';
    let total = 0;
    for (;;) {
      const result = await manager.query(`DELETE FROM tasks WHERE timer_id = CAST(? AS UNSIGNED) AND run_at > ?${bound} AND status = ? ORDER BY run_at LIMIT ?`, [
        timerId,
        afterMs,
        ...(beforeMs === undefined ? [] : [beforeMs]),
        TaskStatus.Pending,
        DELETE_CHUNK,
      ]);
      const deleted = affectedRows(result);
      total += deleted;
      if (deleted < DELETE_CHUNK) return total;
    }
  }

  /**
   * Deletes the timer's open fires at or after `fromMs`: pending ones, and ones an earlier edit recorded
   * superseded (never due yet; a later write of the same fire must not find them in its way). An edit
   * leaves these to the migrator, which writes them again from the new definition. In chunks of
   * {@link DELETE_CHUNK}; returns how many it deleted.
   */
  async deleteOpenFrom(timerId: string, fromMs: number, manager: EntityManager): Promise<number> {
    if (!isId(timerId)) return 0;
    checkEpochMs('fromMs', fromMs);
    let total = 0;
    for (;;) {
      const result = await manager.query(
        `DELETE FROM tasks WHERE timer_id = CAST(? AS UNSIGNED) AND run_at >= ? AND (status = ? OR (status = ? AND ${REOPENABLE})) ORDER BY run_at LIMIT ?`,
        [timerId, fromMs, TaskStatus.Pending, TaskStatus.Missed, DELETE_CHUNK],
      );
      const deleted = affectedRows(result);
      total += deleted;
      if (deleted < DELETE_CHUNK) return total;
    }
  }

  /**
   * The timer's fires with fromMs <= run_at < toMs (no upper bound without toMs), ascending, locked
   * FOR UPDATE until the transaction of `manager` ends. Under REPEATABLE READ (the InnoDB default)
   * the range scan on uk_timer_run_at also locks the gaps, so no fire of the timer can be inserted
   * in the range (a migrator expanding the old definition) and no claim can take one until then.
   */
  async firesForUpdate(timerId: string, fromMs: number, toMs: number | undefined, manager: EntityManager): Promise<StoredFire[]> {
    if (!isId(timerId)) return [];
    if (!Number.isSafeInteger(fromMs) || (toMs !== undefined && !Number.isSafeInteger(toMs))) throw new RangeError('fromMs and toMs must be integers of epoch ms');
    const rows = (await manager.query(
      `SELECT run_at, status, (status = ? AND ${REOPENABLE}) AS superseded, IF(status = ? AND error LIKE ?, error, NULL) AS excluded FROM tasks
       WHERE timer_id = CAST(? AS UNSIGNED) AND run_at >= ?${toMs === undefined ? '' : ' AND run_at < ?'} ORDER BY run_at FOR UPDATE`,
      [TaskStatus.Missed, TaskStatus.Missed, `${CALENDAR_PREFIX}%`, timerId, fromMs, ...(toMs === undefined ? [] : [toMs])],
    )) as { run_at: string | number; status: number; superseded: number | string | null; excluded: string | null }[];
    return rows.map((r) => ({
      runAt: Number(r.run_at),
      status: Number(r.status) as TaskStatusValue,
      superseded: Number(r.superseded) === 1,
      ...(r.excluded !== null ? { excluded: r.excluded } : {}),
    }));
  }

  /**
   * Records the timer's pending fires at `runAts` as missed with `reason` (which must start with
   * {@link SUPERSEDED_PREFIX}); fires no longer pending are left as they are. Returns how many changed.
   */
  async supersede(timerId: string, runAts: number[], reason: string, manager: EntityManager): Promise<number> {
    if (!reason.startsWith(SUPERSEDED_PREFIX)) throw new RangeError(`a superseded fire's reason starts with "${SUPERSEDED_PREFIX}"`);
    return this.updateFires(timerId, runAts, manager, 'status = ?, error = ?', [TaskStatus.Missed, reason], 'status = ?', [TaskStatus.Pending]);
  }

  /**
   * Makes the timer's superseded or calendar-excluded fires at `runAts` pending again (a later edit,
   * of the timer or of a calendar, brought them back). Returns how many.
   */
  async reopenSuperseded(timerId: string, runAts: number[], manager: EntityManager): Promise<number> {
    return this.updateFires(timerId, runAts, manager, 'status = ?, attempt = 0, error = NULL', [TaskStatus.Pending], `status = ? AND ${REOPENABLE}`, [TaskStatus.Missed]);
  }

  /**
   * Records the timer's pending or reopenable fires at `runAts` as missed with `reason` (which must
   * start with {@link CALENDAR_PREFIX}): a calendar now excludes their day. Returns how many changed.
   */
  async exclude(timerId: string, runAts: number[], reason: string, manager: EntityManager): Promise<number> {
    if (!reason.startsWith(CALENDAR_PREFIX)) throw new RangeError(`an excluded fire's reason starts with "${CALENDAR_PREFIX}"`);
    return this.updateFires(timerId, runAts, manager, 'status = ?, error = ?', [TaskStatus.Missed, reason], `(status = ? OR (status = ? AND ${REOPENABLE}))`, [TaskStatus.Pending, TaskStatus.Missed]);
  }

  private async updateFires(timerId: string, runAts: number[], manager: EntityManager, set: string, setParams: unknown[], where: string, whereParams: unknown[]): Promise<number> {
    if (!isId(timerId)) return 0;
    for (const r of runAts) if (!Number.isSafeInteger(r)) throw new RangeError(`invalid runAt ${String(r)}`);
    let changed = 0;
    for (let i = 0; i < runAts.length; i += INSERT_CHUNK) {
      const chunk = runAts.slice(i, i + INSERT_CHUNK);
      const result = await manager.query(
        `UPDATE tasks SET ${set} WHERE timer_id = CAST(? AS UNSIGNED) AND run_at IN (${chunk.map(() => '?').join(', ')}) AND ${where}`,
        [...setParams, timerId, ...chunk, ...whereParams],
      );
      changed += affectedRows(result);
    }
    return changed;
  }

  /**
   * A page of fire records, latest run time first, with the total count. One timer's read
   * uk_timer_run_at backwards (run_at DESC); an app's read idx_app_run_at_outcome (app, run_at, outcome)
   * backwards, in its order (run_at DESC, outcome DESC, id DESC), so no page sorts the whole range.
   */
  async records(f: RecordsFilter, page: PageOptions): Promise<{ items: TaskEntity[]; total: number }> {
    const offset = pageOffset(page);
    if (f.timerId !== undefined && !isId(f.timerId)) return { items: [], total: 0 };
    const [items, total] = await this.recordsQuery(f).offset(offset).limit(page.size).getManyAndCount();
    return { items, total };
  }

  /**
   * The query behind {@link records} (without paging), for its plan. An app's records name their index:
   * with a status filter the optimizer may otherwise prefer idx_outcome_run_at, which spans every app.
   */
  recordsQuery(f: RecordsFilter): SelectQueryBuilder<TaskEntity> {
    for (const [name, v] of [['fromMs', f.fromMs], ['toMs', f.toMs], ['runAt', f.runAt]] as const) if (v !== undefined) checkEpochMs(name, v);
    checkEpochMs('nowMs', f.nowMs);
    const q = this.dataSource.manager.createQueryBuilder(TaskEntity, 'k');
    if (f.timerId === undefined) q.useIndex('idx_app_run_at_outcome');
    q.where('k.app = :app', { app: f.app });
    if (f.timerId !== undefined) q.andWhere('k.timerId = CAST(:timerId AS UNSIGNED)', { timerId: f.timerId });
    if (f.runAt !== undefined) q.andWhere('k.runAt = :runAt', { runAt: f.runAt });
    if (f.status !== undefined) q.andWhere('k.status = :status', { status: f.status });
    if (f.fromMs !== undefined) q.andWhere('k.runAt >= :fromMs', { fromMs: f.fromMs });
    if (f.toMs !== undefined) q.andWhere('k.runAt < :toMs', { toMs: f.toMs });
    if (!f.includePending) q.andWhere('NOT (k.status = :pending AND k.runAt > :nowMs)', { pending: TaskStatus.Pending, nowMs: f.nowMs });
    // run_at is unique within a timer, so a timer's records need no tie-break (and the index scan no
    // sort); an app's follow idx_app_run_at_outcome (the id is the primary key the index entries end with).
    q.orderBy('k.runAt', 'DESC');
    return f.timerId === undefined ? q.addOrderBy('k.outcome', 'DESC').addOrderBy('k.id', 'DESC') : q;
  }

  /** The fire (timerId, runAt), or null. */
  async find(timerId: string, runAt: number): Promise<TaskEntity | null> {
    if (!isId(timerId) || !Number.isSafeInteger(runAt)) return null;
    return this.dataSource.manager
      .createQueryBuilder(TaskEntity, 'k')
      .where('k.timerId = CAST(:timerId AS UNSIGNED) AND k.runAt = :runAt', { timerId, runAt })
      .getOne();
  }

  /**
   * Deletes finished records (succeeded, failed, missed) whose run_at < cutoffMs, `batchSize` rows
   * per statement, so no statement holds locks on a huge range, until none is left or `maxBatches`
   * statements have run. Returns the total (maxBatches x batchSize: there may be more). Reads the
   * finished ranges of idx_outcome_run_at in its order (outcome, run_at): no sort, no open row read.
   */
  async purgeOlderThan(cutoffMs: number, batchSize: number, maxBatches = Number.POSITIVE_INFINITY): Promise<number> {
    checkEpochMs('cutoffMs', cutoffMs);
    return deleteInBatches(
      this.dataSource,
      `DELETE FROM tasks WHERE outcome IN (${FINISHED_TASK_STATUSES.map(() => '?').join(', ')}) AND run_at < ? ORDER BY outcome, run_at LIMIT ?`,
      [...FINISHED_TASK_STATUSES, cutoffMs],
      batchSize,
      maxBatches,
    );
  }
}
