import { LedgerRepository, TaskStatus } from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

describe('LedgerRepository against a real MariaDB', () => {
  let db: FreshDatabase;
  let ledger: LedgerRepository;
  const H = 3_600_000;
  const W0 = 1_893_456_000_000; // a window start (whole hour)
  const NOW = W0 + H + 30 * 60_000;

  async function insert(app: string, timerId: string, runAt: number, status: number, extra: { attempt?: number; claimedBy?: string | null; claimedUntil?: number | null } = {}) {
    await db.dataSource.query('INSERT INTO tasks (app, timer_id, run_at, status, attempt, claimed_by, claimed_until) VALUES (?, CAST(? AS UNSIGNED), ?, ?, ?, ?, ?)', [
      app,
      timerId,
      runAt,
      status,
      extra.attempt ?? 0,
      extra.claimedBy ?? null,
      extra.claimedUntil ?? null,
    ]);
  }

  beforeAll(async () => {
    db = await freshDatabase();
    ledger = new LedgerRepository(db.dataSource);
    // Window W0 of app a: 2 delivered, 1 failed, 1 missed, 1 stranded pending.
    await insert('a', '1', W0 + 1_000, TaskStatus.Succeeded, { attempt: 1 });
    await insert('a', '1', W0 + 2_000, TaskStatus.Succeeded, { attempt: 1 });
    await insert('a', '2', W0 + 3_000, TaskStatus.Failed, { attempt: 3 });
    await insert('a', '3', W0 + 4_000, TaskStatus.Missed, { attempt: 1 });
    await insert('a', '4', W0 + 5_000, TaskStatus.Pending);
    // Window W0 + H of app a: a fire whose executor died (lease over), one held by a live claim,
    // one waiting for its retry (time passed), one pending within the grace, one in the future.
    await insert('a', '5', W0 + H + 60_000, TaskStatus.Running, { attempt: 1, claimedBy: 'exec:1', claimedUntil: NOW - 1 });
    await insert('a', '6', W0 + H + 70_000, TaskStatus.Running, { attempt: 1, claimedBy: 'exec:2', claimedUntil: NOW + 30_000 });
    await insert('a', '7', W0 + H + 80_000, TaskStatus.Running, { attempt: 2, claimedBy: null, claimedUntil: NOW - 5 });
    await insert('a', '8', NOW - 5_000, TaskStatus.Pending);
    await insert('a', '9', NOW + 60_000, TaskStatus.Pending);
    // Another app's fire in window W0.
    await insert('b', '10', W0 + 9_000, TaskStatus.Pending);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('lists the fires past their time that no live claim covers, oldest first', async () => {
    const overdue = await ledger.overdue(NOW - 30_000, NOW, 100);
    expect(overdue.map((f) => `${f.timerId}@${f.runAt - W0}`)).toEqual(['4@5000', '10@9000', '5@3660000', '7@3680000']);
    expect(overdue.find((f) => f.timerId === '5')).toEqual({ timerId: '5', runAt: W0 + H + 60_000, status: TaskStatus.Running, attempt: 1, claimedBy: 'exec:1', backfill: false });
    expect(overdue.find((f) => f.timerId === '7')?.claimedBy).toBeNull();
    expect((await ledger.overdue(NOW - 30_000, NOW, 2)).map((f) => f.timerId)).toEqual(['4', '10']);
  });

  it('counts overdue pending fires and the open fires of finished windows, capped', async () => {
    expect(await ledger.countPendingBefore(NOW - 30_000, 1_000)).toBe(2);
    expect(await ledger.countPendingBefore(NOW - 30_000, 1)).toBe(1);
    expect(await ledger.countOpenBefore(W0 + H, 1_000)).toBe(2);
    expect(await ledger.countOpenBefore(W0 + 2 * H, 1_000)).toBe(7);
  });

  it('accounts for each window of an app: expected, delivered, failed, missed, open', async () => {
    expect(await ledger.accounting('a', W0, W0 + 2 * H, H)).toEqual([
      { windowStart: W0, windowEnd: W0 + H, expected: 5, delivered: 2, failed: 1, missed: 1, open: 1 },
      { windowStart: W0 + H, windowEnd: W0 + 2 * H, expected: 5, delivered: 0, failed: 0, missed: 0, open: 5 },
    ]);
    expect(await ledger.accounting('b', W0, W0 + 2 * H, H)).toEqual([{ windowStart: W0, windowEnd: W0 + H, expected: 1, delivered: 0, failed: 0, missed: 0, open: 1 }]);
    expect(await ledger.accounting('a', W0 + 2 * H, W0 + 3 * H, H)).toEqual([]);
  });

  it('reads the open fires through the (status, run_at) index, and an app through (app, run_at, outcome) alone', async () => {
    type Plan = { key: string | null; type: string; Extra: string | null }[];
    const open = (await db.dataSource.query('EXPLAIN SELECT timer_id, run_at FROM tasks WHERE status = 0 AND run_at < ? ORDER BY run_at LIMIT 10', [NOW])) as Plan;
    expect(open[0].key).toBe('idx_status_run_at');
    const app = (await db.dataSource.query('EXPLAIN SELECT COUNT(*), SUM(outcome = 2) FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ?', ['a', W0, W0 + H])) as Plan;
    expect(app[0].key).toBe('idx_app_run_at_outcome');
    expect(app[0].Extra ?? '').toContain('Using index');
  });
});
