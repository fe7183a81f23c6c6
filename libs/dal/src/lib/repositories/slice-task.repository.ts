import { Injectable } from '@nestjs/common';
import { FireRef } from '@timer/contracts';
import { DataSource } from 'typeorm';
import { OPEN_OUTCOME, TaskStatus } from '../entities/task.entity';

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
   * range is the open rows of `idx_outcome_run_at (outcome, run_at, timer_id)`, in its order; the bucket
   * is checked on the index entry, so only the bucket's rows are read, for their status (a running fire
   * is open too). Named, so the plan cannot drift to an index without timer_id (a row read per entry).
   */
  async pendingInSlice({ fromMs, toMs, bucket, buckets }: SliceRange): Promise<FireRef[]> {
    if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs)) throw new RangeError('fromMs and toMs must be integers of epoch ms');
    if (!Number.isSafeInteger(buckets) || buckets < 1) throw new RangeError(`buckets must be a positive integer, got ${buckets}`);
    if (!Number.isSafeInteger(bucket) || bucket < 0 || bucket >= buckets) throw new RangeError(`bucket must be in [0, ${buckets}), got ${bucket}`);
    if (fromMs >= toMs) return [];
    const rows = (await this.dataSource.query(
      'SELECT CAST(timer_id AS CHAR) AS timerId, run_at AS runAt FROM tasks FORCE INDEX (idx_outcome_run_at) ' +
        'WHERE outcome = ? AND run_at >= ? AND run_at < ? AND timer_id % ? = ? AND status = ? ORDER BY run_at, timer_id',
      [OPEN_OUTCOME, fromMs, toMs, buckets, bucket, TaskStatus.Pending],
    )) as { timerId: string; runAt: string | number }[];
    return rows.map((r) => ({ timerId: String(r.timerId), runAt: Number(r.runAt) }));
  }
}
