import { DataSource } from 'typeorm';
import { dataSourceOptions, LedgerRepository, TaskStatus } from '../src';
import { countOpenSql, OVERDUE_SQL } from '../src/lib/repositories/ledger.repository';
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

  it('reads the open fires through idx_outcome_run_at in its order (no sort), the open count index-only, and an app through (app, run_at, outcome) alone', async () => {
    type Plan = { table: string; key: string | null; Extra: string | null }[];
    // The plan's row of `tasks` (a count's derived table has a row of its own).
    const explain = async (sql: string, params: unknown[]) => ((await db.dataSource.query(`EXPLAIN ${sql}`, params)) as Plan).find((r) => r.table === 't' || r.table === 'tasks') ?? { key: null, Extra: null };
    const overdue = await explain(OVERDUE_SQL, [0, NOW, 0, 0, 1, NOW, 10]);
    expect(overdue.key).toBe('idx_outcome_run_at');
    expect(overdue.Extra ?? '').not.toContain('filesort');
    const pending = await explain(countOpenSql(true), [0, NOW, 0, 1_000]);
    expect(pending.key).toBe('idx_outcome_run_at');
    const open = await explain(countOpenSql(false), [0, NOW, 1_000]);
    expect([open.key, open.Extra ?? '']).toEqual(['idx_outcome_run_at', expect.stringContaining('Using index')]);
    const app = await explain('SELECT COUNT(*), SUM(outcome = 2) FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ?', ['a', W0, W0 + H]);
    expect(app.key).toBe('idx_app_run_at_outcome');
    expect(app.Extra ?? '').toContain('Using index');
  });

  it('stops its walk of the open rows at the limit: a backlog of overdue pending fires is not read for the expired claims after it', async () => {
    const T = W0 - H; // before every fire above
    const backlog = 3_000;
    for (let i = 0; i < backlog; i += 1_000) {
      const rows = Array.from({ length: 1_000 }, (_, j) => ['z', String(100_000 + i + j), T + i + j, TaskStatus.Pending]);
      await db.dataSource.query(`INSERT INTO tasks (app, timer_id, run_at, status) VALUES ${rows.map(() => '(?, ?, ?, ?)').join(', ')}`, rows.flat());
    }
    await insert('z', '99999', T + backlog + 1, TaskStatus.Running, { attempt: 1, claimedBy: 'exec:3', claimedUntil: NOW - 1 });
    // One connection, so its session counters are this statement's.
    const one = new DataSource(dataSourceOptions(db.url, 1));
    await one.initialize();
    try {
      const reads = async () => Number(((await one.query("SHOW SESSION STATUS LIKE 'Handler_read_next'")) as { Value: string }[])[0].Value);
      const before = await reads();
      const found = await new LedgerRepository(one).overdue(NOW - 30_000, NOW, 10);
      const read = (await reads()) - before;
      expect(found.map((f) => f.runAt - T)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(read).toBeLessThan(100);
      // The limit reached, the expired claim behind the backlog is found in the same walk.
      expect((await new LedgerRepository(one).overdue(NOW - 30_000, NOW, backlog + 1)).at(-1)).toMatchObject({ timerId: '99999', status: TaskStatus.Running });
    } finally {
      await one.destroy();
      await db.dataSource.query("DELETE FROM tasks WHERE app = 'z'");
    }
  });
});
