import { Injectable } from '@nestjs/common';
import { FireRef } from '@timer/contracts';
import { DataSource } from 'typeorm';
import { TaskStatus } from '../entities/task.entity';

export interface SliceRange {
  /** Inclusive, epoch ms. */
  fromMs: number;
  /** Exclusive, epoch ms. */
  toMs: number;
  /** Bucket of the slice in [0, buckets): rows with timer_id % buckets = bucket. */
  bucket: number;
  buckets: number;
}

/** Reads of the task table by 2-D slice (minute range, bucket) for the trigger's MySQL reconcile. */
@Injectable()
export class SliceTaskRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Pending fires (status 0) with fromMs <= run_at < toMs in the bucket, ascending by run_at. The
   * range narrows on `idx_run_at_status_timer`, which also holds status and timer_id: the index alone
   * answers it.
   */
  async pendingInSlice({ fromMs, toMs, bucket, buckets }: SliceRange): Promise<FireRef[]> {
    if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs)) throw new RangeError('fromMs and toMs must be integers of epoch ms');
    if (!Number.isSafeInteger(buckets) || buckets < 1) throw new RangeError(`buckets must be a positive integer, got ${buckets}`);
    if (!Number.isSafeInteger(bucket) || bucket < 0 || bucket >= buckets) throw new RangeError(`bucket must be in [0, ${buckets}), got ${bucket}`);
    if (fromMs >= toMs) return [];
    const rows = (await this.dataSource.query(
      'SELECT CAST(timer_id AS CHAR) AS timerId, run_at AS runAt FROM tasks ' +
        'WHERE run_at >= ? AND run_at < ? AND status = ? AND timer_id % ? = ? ORDER BY run_at, timer_id',
      [fromMs, toMs, TaskStatus.Pending, buckets, bucket],
    )) as { timerId: string; runAt: string | number }[];
    return rows.map((r) => ({ timerId: String(r.timerId), runAt: Number(r.runAt) }));
  }
}
