import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { TimerChange, TimerVersionEntity } from '../entities/timer-version.entity';
import { checkEpochMs, idMatches, isId, managerOf, PageOptions, pageOffset } from './query-helpers';

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
      `INSERT INTO timer_versions
         (timer_id, app, version, change_kind, changed_at, name, cron, run_at, every_ms, time_zone, dst_gap, dst_overlap, start_at, end_at, max_fires, final_at,
          notify_http_param, status, max_attempts, backoff_ms, misfire_policy, overlap_policy, catchup_policy, catchup_window_ms, jitter_ms, failure_webhook, auto_spread, spread_offset_ms)
       SELECT id, app, version, ?, ?, name, cron, run_at, every_ms, time_zone, dst_gap, dst_overlap, start_at, end_at, max_fires, final_at,
          notify_http_param, status, max_attempts, backoff_ms, misfire_policy, overlap_policy, catchup_policy, catchup_window_ms, jitter_ms, failure_webhook, auto_spread, spread_offset_ms
       FROM timers WHERE ${idMatches(timerIds.length)}`,
      [change, atMs, ...timerIds],
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
