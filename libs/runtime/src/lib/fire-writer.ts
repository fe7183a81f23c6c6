import { Inject, Injectable } from '@nestjs/common';
import { NewTask, TaskRepository, TimerEntity } from '@timer/dal';
import { SliceIndex } from '@timer/redis';
import { fireTimesBetween, specOf } from '@timer/schedule';
import type { EntityManager } from 'typeorm';

export type FireRows = Pick<TaskRepository, 'insertIgnore'>;
export type FireIndexer = Pick<SliceIndex, 'add'>;

/**
 * Turns timers into stored fires, for every path that creates them (enable, run now, the migrator's
 * windows): task rows in MySQL first, then their entries in the Redis slice index, so every index
 * entry (and so every task message) names an existing row. Both steps are idempotent.
 */
@Injectable()
export class FireWriter {
  constructor(
    @Inject(TaskRepository) private readonly rows: FireRows,
    @Inject(SliceIndex) private readonly index: FireIndexer,
  ) {}

  /**
   * The fires of `timer` in [fromMs, untilMs), at most `limit`. Throws `ScheduleError` when its stored
   * schedule does not evaluate.
   */
  static firesOf(timer: Pick<TimerEntity, 'id' | 'app' | 'cron' | 'runAt' | 'timeZone'>, fromMs: number, untilMs: number, limit?: number): NewTask[] {
    return fireTimesBetween(specOf(timer), fromMs, untilMs, limit).map((runAt) => ({ app: timer.app, timerId: timer.id, runAt }));
  }

  /**
   * Writes fires: rows (INSERT IGNORE, inside `manager`'s transaction when given), then index entries.
   * Returns how many rows were new. With a transaction, a Redis failure rolls the rows back; a commit
   * that fails after the index write leaves index entries without rows, which the executor drops.
   */
  async write(fires: NewTask[], manager?: EntityManager): Promise<number> {
    if (fires.length === 0) return 0;
    const inserted = await this.rows.insertIgnore(fires, manager);
    await this.index.add(fires.map((f) => ({ timerId: f.timerId, runAt: f.runAt })));
    return inserted;
  }
}
