import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { FINISHED_TASK_STATUSES, TaskEntity, TaskStatus } from '../entities/task.entity';
import { affectedRows, isId, managerOf, pageOffset } from './query-helpers';

/** One fire to pre-create. */
export interface NewTask {
  app: string;
  timerId: string;
  /** Epoch ms. */
  runAt: number;
}

/** Rows per INSERT statement in {@link TaskRepository.insertIgnore}. */
export const INSERT_CHUNK = 1000;

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
      const params: (string | number)[] = [];
      for (const r of chunk) params.push(r.app, r.timerId, r.runAt);
      const result = await m.query(
        `INSERT IGNORE INTO tasks (app, timer_id, run_at) VALUES ${chunk.map(() => '(?, CAST(? AS UNSIGNED), ?)').join(', ')}`,
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

  /** A page of the timer's fire records, newest first (run_at DESC, id DESC), optionally of one status. */
  async records(timerId: string, opts: { page: number; size: number; status?: number }): Promise<{ items: TaskEntity[]; total: number }> {
    const offset = pageOffset(opts);
    if (!isId(timerId)) return { items: [], total: 0 };
    const q = this.dataSource.manager.createQueryBuilder(TaskEntity, 'k').where('k.timerId = CAST(:timerId AS UNSIGNED)', { timerId });
    if (opts.status !== undefined) q.andWhere('k.status = :status', { status: opts.status });
    const [items, total] = await q.orderBy('k.runAt', 'DESC').addOrderBy('k.id', 'DESC').offset(offset).limit(opts.size).getManyAndCount();
    return { items, total };
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
   * statements have run. Returns the total (maxBatches x batchSize: there may be more).
   */
  async purgeOlderThan(cutoffMs: number, batchSize: number, maxBatches = Number.POSITIVE_INFINITY): Promise<number> {
    if (!Number.isSafeInteger(cutoffMs)) throw new RangeError('cutoffMs must be an integer of epoch ms');
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a positive integer');
    if (!(maxBatches >= 1)) throw new RangeError('maxBatches must be at least 1');
    let total = 0;
    for (let batches = 0; batches < maxBatches; batches++) {
      const result = await this.dataSource.query(
        `DELETE FROM tasks WHERE run_at < ? AND status IN (${FINISHED_TASK_STATUSES.map(() => '?').join(', ')}) ORDER BY run_at LIMIT ?`,
        [cutoffMs, ...FINISHED_TASK_STATUSES, batchSize],
      );
      const deleted = affectedRows(result);
      total += deleted;
      if (deleted < batchSize) break;
    }
    return total;
  }
}
