import { SliceTaskRepository, TaskStatus } from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

describe('SliceTaskRepository against a real MariaDB', () => {
  let db: FreshDatabase;
  let repo: SliceTaskRepository;
  const M = 1_893_456_000_000;

  beforeAll(async () => {
    db = await freshDatabase();
    repo = new SliceTaskRepository(db.dataSource);
    const rows: [string, number, number][] = [
      ['1', M + 10, TaskStatus.Pending], // bucket 1 of 4
      ['5', M + 20, TaskStatus.Pending], // bucket 1
      ['5', M + 30, TaskStatus.Running], // not pending
      ['2', M + 40, TaskStatus.Pending], // bucket 2
      ['9', M + 60_000, TaskStatus.Pending], // next minute
      ['18446744073709551613', M + 50, TaskStatus.Pending], // 2^64 - 3: bucket 1 of 4 (exact BIGINT math)
    ];
    for (const [timerId, runAt, status] of rows) {
      await db.dataSource.query('INSERT INTO tasks (app, timer_id, run_at, status) VALUES (?, CAST(? AS UNSIGNED), ?, ?)', ['a', timerId, runAt, status]);
    }
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('returns the pending fires of one bucket in a run_at range, ascending', async () => {
    expect(await repo.pendingInSlice({ fromMs: M, toMs: M + 60_000, bucket: 1, buckets: 4 })).toEqual([
      { timerId: '1', runAt: M + 10 },
      { timerId: '5', runAt: M + 20 },
      { timerId: '18446744073709551613', runAt: M + 50 },
    ]);
    expect(await repo.pendingInSlice({ fromMs: M + 15, toMs: M + 50, bucket: 1, buckets: 4 })).toEqual([{ timerId: '5', runAt: M + 20 }]);
    expect(await repo.pendingInSlice({ fromMs: M, toMs: M + 60_000, bucket: 2, buckets: 4 })).toEqual([{ timerId: '2', runAt: M + 40 }]);
    expect(await repo.pendingInSlice({ fromMs: M + 5, toMs: M + 5, bucket: 0, buckets: 4 })).toEqual([]);
  });

  it('narrows the scan to the open rows of the run_at range, checks the bucket on the index entry, and sorts nothing', async () => {
    const plan = (await db.dataSource.query(
      'EXPLAIN SELECT timer_id, run_at FROM tasks FORCE INDEX (idx_outcome_run_at) WHERE outcome = 0 AND run_at >= ? AND run_at < ? AND timer_id % 4 = 1 AND status = 0 ORDER BY run_at, timer_id',
      [M, M + 60_000],
    )) as { key: string | null; type: string; Extra: string | null }[];
    expect(plan[0].key).toBe('idx_outcome_run_at');
    expect(plan[0].type).toBe('range');
    expect(plan[0].Extra ?? '').toContain('Using index condition');
    expect(plan[0].Extra ?? '').not.toMatch(/filesort/i);
  });

  it('refuses a bucket outside the bucket count', async () => {
    await expect(repo.pendingInSlice({ fromMs: M, toMs: M + 1, bucket: 4, buckets: 4 })).rejects.toThrow(RangeError);
  });
});
