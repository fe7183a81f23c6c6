import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { TimerStatus } from '../entities/timer.entity';
import { TimerChange, TimerVersionEntity } from '../entities/timer-version.entity';
import { checkEpochMs, idMatches, isId, managerOf, PageOptions, pageOffset } from './query-helpers';

/** The definition columns a version copies from the timer's row as they are (none of them is a column of `v` in snapshotCreatedEnabled). */
const COPIED_COLUMNS =
  'name, cron, run_at, every_ms, time_zone, dst_gap, dst_overlap, start_at, end_at, max_fires, final_at, notify_http_param, ' +
  'max_attempts, backoff_ms, misfire_policy, overlap_policy, catchup_policy, catchup_window_ms, jitter_ms, failure_webhook, result_webhook, auto_spread, calendars, on_excluded';

/** The history of timer definitions (`timer_versions`): one snapshot per version. */
@Injectable()
export class TimerVersionRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Records the timer's row as it is now in `manager`'s transaction (call it after the write that made
   * the version), as version `timers.version`, written by `change` at `atMs`.
   */
  async snapshot(timerId: string, change: TimerChange, atMs: number, manager?: EntityManager): Promise<void> {
    await this.snapshotMany([timerId], change, atMs, manager);
  }

  /** {@link snapshot} of several timers in one statement (a batch create or enable). */
  async snapshotMany(timerIds: string[], change: TimerChange, atMs: number, manager?: EntityManager): Promise<void> {
    const bad = timerIds.find((id) => !isId(id));
    if (bad !== undefined) throw new RangeError(`invalid timer id ${JSON.stringify(bad)}`);
    checkEpochMs('atMs', atMs);
    if (timerIds.length === 0) return;
    await managerOf(this.dataSource, manager).query(
      `INSERT INTO timer_versions (timer_id, app, version, change_kind, changed_at, status, spread_offset_ms, ${COPIED_COLUMNS})
       SELECT id, app, version, ?, ?, status, spread_offset_ms, ${COPIED_COLUMNS}
       FROM timers WHERE ${idMatches(timerIds.length)}`,
      [change, atMs, ...timerIds],
    );
  }

  /**
   * The two versions of timers inserted enabled in `manager`'s transaction (a batch create with enable,
   * `NewTimer.enabled`: the rows are at version 2), in one statement: version 1 (`create`) as the create
   * recorded it before the enable (disabled, no spread offset) and version 2 (`enable`), the row as it is.
   */
  async snapshotCreatedEnabled(timerIds: string[], atMs: number, manager: EntityManager): Promise<void> {
    const bad = timerIds.find((id) => !isId(id));
    if (bad !== undefined) throw new RangeError(`invalid timer id ${JSON.stringify(bad)}`);
    checkEpochMs('atMs', atMs);
    if (timerIds.length === 0) return;
    await manager.query(
      `INSERT INTO timer_versions (timer_id, app, version, change_kind, changed_at, status, spread_offset_ms, ${COPIED_COLUMNS})
       SELECT t.id, t.app, v.version, v.change_kind, ?, IF(v.version = 1, ?, t.status), IF(v.version = 1, NULL, t.spread_offset_ms), ${COPIED_COLUMNS}
       FROM timers t JOIN (SELECT 1 AS version, 'create' AS change_kind UNION ALL SELECT 2, 'enable') v
       WHERE ${idMatches(timerIds.length, 't.id')} ORDER BY t.id, v.version`,
      [atMs, TimerStatus.Disabled, ...timerIds],
    );
  }

  /** A page of the timer's versions, newest first, with the total count. */
  async list(timerId: string, opts: PageOptions): Promise<{ items: TimerVersionEntity[]; total: number }> {
    const offset = pageOffset(opts);
    if (!isId(timerId)) return { items: [], total: 0 };
    const [items, total] = await this.dataSource.manager
      .createQueryBuilder(TimerVersionEntity, 'v')
      .where('v.timerId = CAST(:timerId AS UNSIGNED)', { timerId })
      .orderBy('v.version', 'DESC')
      .offset(offset)
      .limit(opts.size)
      .getManyAndCount();
    return { items, total };
  }
}
