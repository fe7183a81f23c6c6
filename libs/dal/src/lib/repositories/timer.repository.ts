import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { NotifyHttpParam, TimerEntity, TimerStatus, TimerStatusValue } from '../entities/timer.entity';
import { DuplicateTimerNameError, isDuplicateKeyError } from '../errors';
import { affectedRows, isId, likeContains, managerOf, pageOffset } from './query-helpers';

/** What creating a timer needs; the schedule must already be validated (@timer/schedule). */
export interface NewTimer {
  app: string;
  name: string;
  cron?: string | null;
  runAt?: number | null;
  timeZone?: string;
  notifyHttpParam: NotifyHttpParam;
  /** Default disabled (1). */
  status?: TimerStatusValue;
  maxAttempts?: number;
  backoffMs?: number;
  misfirePolicy?: string;
}

/** The fields an edit replaces (everything but the id, the app, the status and the bookkeeping). */
export interface TimerFields {
  name: string;
  cron: string | null;
  runAt: number | null;
  timeZone: string;
  notifyHttpParam: NotifyHttpParam;
  maxAttempts: number;
  backoffMs: number;
  misfirePolicy: string;
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
      const result = await m
        .createQueryBuilder()
        .insert()
        .into(TimerEntity)
        .values({
          app: t.app,
          name: t.name,
          liveName: t.name,
          cron: t.cron ?? null,
          runAt: t.runAt ?? null,
          timeZone: t.timeZone ?? 'UTC',
          notifyHttpParam: t.notifyHttpParam,
          status: t.status ?? TimerStatus.Disabled,
          ...(t.maxAttempts !== undefined ? { maxAttempts: t.maxAttempts } : {}),
          ...(t.backoffMs !== undefined ? { backoffMs: t.backoffMs } : {}),
          ...(t.misfirePolicy !== undefined ? { misfirePolicy: t.misfirePolicy } : {}),
        })
        .updateEntity(false)
        .execute();
      return String((result.raw as { insertId: number | string }).insertId);
    } catch (e) {
      if (isDuplicateKeyError(e)) throw new DuplicateTimerNameError(t.app, t.name);
      throw e;
    }
  }

  /** The live (not deleted) timer `id` of `app`, else null. */
  async findLive(app: string, id: string, manager?: EntityManager): Promise<TimerEntity | null> {
    if (!isId(id)) return null;
    return managerOf(this.dataSource, manager)
      .createQueryBuilder(TimerEntity, 't')
      .where('t.id = CAST(:id AS UNSIGNED) AND t.app = :app AND t.deletedAt IS NULL', { id, app })
      .getOne();
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
    if (status !== TimerStatus.Disabled && status !== TimerStatus.Enabled) throw new RangeError(`invalid timer status ${String(status)}`);
    const result = await managerOf(this.dataSource, manager).query(
      'UPDATE timers SET status = ?, version = version + 1 WHERE id = CAST(? AS UNSIGNED) AND app = ? AND deleted_at IS NULL',
      [status, id, app],
    );
    return affectedRows(result) > 0;
  }

  /**
   * Replaces the definition of a live timer and bumps its version; false when the app has no such
   * live timer. Throws DuplicateTimerNameError when another live timer of the app has the new name.
   */
  async update(app: string, id: string, f: TimerFields, manager?: EntityManager): Promise<boolean> {
    if (!isId(id)) return false;
    try {
      const result = await managerOf(this.dataSource, manager).query(
        `UPDATE timers SET name = ?, live_name = ?, cron = ?, run_at = ?, time_zone = ?, notify_http_param = ?, max_attempts = ?, backoff_ms = ?,
           misfire_policy = ?, version = version + 1
         WHERE id = CAST(? AS UNSIGNED) AND app = ? AND deleted_at IS NULL`,
        [f.name, f.name, f.cron, f.runAt, f.timeZone, JSON.stringify(f.notifyHttpParam), f.maxAttempts, f.backoffMs, f.misfirePolicy, id, app],
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

  /** Enabled live timers with id > afterId, ascending, at most `limit` (keyset paging for the migrator). */
  async enabledPage(afterId: string | null, limit: number, upToId?: string): Promise<TimerEntity[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    if (afterId !== null && !isId(afterId)) throw new RangeError(`invalid afterId ${JSON.stringify(afterId)}`);
    if (upToId !== undefined && !isId(upToId)) throw new RangeError(`invalid upToId ${JSON.stringify(upToId)}`);
    const q = this.dataSource.manager
      .createQueryBuilder(TimerEntity, 't')
      .where('t.status = :status AND t.deletedAt IS NULL AND t.id > CAST(:afterId AS UNSIGNED)', { status: TimerStatus.Enabled, afterId: afterId ?? '0' });
    if (upToId !== undefined) q.andWhere('t.id <= CAST(:upToId AS UNSIGNED)', { upToId });
    return q.orderBy('t.id', 'ASC').limit(limit).getMany();
  }

  /**
   * Ids that cut the enabled timers into consecutive ranges of `size` timers: the size-th, 2*size-th,
   * ... enabled id, at most `max` of them (none when all fit one range). One index-only read
   * (idx_status_id) per boundary; the migrator splits a large window at these ids.
   */
  async enabledBoundaries(size: number, max: number): Promise<string[]> {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError('size must be a positive integer');
    const out: string[] = [];
    let after = '0';
    while (out.length < max) {
      // The boundary closes a full range only when a timer follows it: otherwise the rest is one range.
      const rows = (await this.dataSource.query(
        // Aliased apart from `id`: ORDER BY id would otherwise sort the CHAR alias as text.
        'SELECT CAST(id AS CHAR) AS boundary FROM timers WHERE status = ? AND id > CAST(? AS UNSIGNED) ORDER BY id LIMIT 2 OFFSET ?',
        [TimerStatus.Enabled, after, size - 1],
      )) as { boundary: string }[];
      if (rows.length < 2) break;
      after = rows[0].boundary;
      out.push(after);
    }
    return out;
  }
}
