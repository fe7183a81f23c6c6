import { AppRepository, LedgerRepository, PAUSED_REASON, TaskRepository, TaskStatus } from '../src';
import { MISS_PAUSED_SQL } from '../src/lib/repositories/ledger.repository';
import { FreshDatabase, freshDatabase } from './fresh-database';

describe('pauses and disables in bulk against a real MariaDB', () => {
  let db: FreshDatabase;
  let apps: AppRepository;
  let ledger: LedgerRepository;
  let tasks: TaskRepository;
  const T = 1_893_456_000_000;
  const H = 3_600_000;

  async function insert(app: string, timerId: string, runAt: number, status: number = TaskStatus.Pending) {
    await db.dataSource.query('INSERT INTO tasks (app, timer_id, run_at, status) VALUES (?, CAST(? AS UNSIGNED), ?, ?)', [app, timerId, runAt, status]);
  }
  async function rows(where: string, params: unknown[]) {
    return (await db.dataSource.query(`SELECT timer_id, run_at, status, error FROM tasks WHERE ${where} ORDER BY timer_id, run_at`, params)) as {
      timer_id: string;
      run_at: string;
      status: number;
      error: string | null;
    }[];
  }
  const pause = (app: string, pausedAt: number, resumedAt: number | null) => db.dataSource.transaction((m) => apps.setPause(app, pausedAt, resumedAt, m));

  beforeAll(async () => {
    db = await freshDatabase();
    apps = new AppRepository(db.dataSource);
    ledger = new LedgerRepository(db.dataSource);
    tasks = new TaskRepository(db.dataSource);
    for (const app of ['p', 'q', 'r', 'old']) await apps.create(app);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('stores a pause window without touching updated_at (the executors\' caches poll it), and lists open and recently ended ones', async () => {
    await db.dataSource.query("UPDATE apps SET updated_at = '2030-01-01 00:00:00.000'");
    await db.dataSource.transaction(async (m) => {
      expect(await apps.pauseForUpdate('p', m)).toEqual({ pausedAt: null, resumedAt: null });
      expect(await apps.pauseForUpdate('nope', m)).toBeNull();
    });
    await pause('p', T, null);
    await pause('q', T + 1_000, T + 5_000);
    await pause('old', T - 3 * H, T - 2 * H);
    const [{ u }] = (await db.dataSource.query("SELECT COUNT(*) AS u FROM apps WHERE updated_at <> '2030-01-01 00:00:00.000'")) as { u: string }[];
    expect(Number(u)).toBe(0);
    expect(await apps.pauseWindows(T - H)).toEqual([
      { app: 'p', pausedAt: T, resumedAt: null },
      { app: 'q', pausedAt: T + 1_000, resumedAt: T + 5_000 },
    ]);
    expect((await apps.pauseWindows(T - 3 * H)).map((w) => w.app)).toEqual(['old', 'p', 'q']);
    expect((await apps.find('q'))?.resumedAt).toBe(T + 5_000);
  });

  it('records the pending fires of a pause interval missed, one app, oldest first, bounded, through the open rows of idx_outcome_run_at', async () => {
    for (let i = 0; i < 5; i++) await insert('p', '1', T + i * 1_000);
    await insert('p', '1', T - 1_000); // before the pause
    await insert('p', '2', T + 2_500, TaskStatus.Running); // claimed before the pause took effect
    await insert('p', '2', T + 3_500, TaskStatus.Succeeded);
    await insert('r', '3', T + 1_000); // another app
    expect(await ledger.missPaused('p', T, T + 4_000, 2)).toBe(2);
    expect(await ledger.missPaused('p', T, T + 4_000, 100)).toBe(2);
    expect(await ledger.missPaused('p', T, T + 4_000, 100)).toBe(0);
    const p = await rows('app = ?', ['p']);
    expect(p.map((r) => [Number(r.run_at) - T, r.status, r.error])).toEqual([
      [-1_000, TaskStatus.Pending, null],
      [0, TaskStatus.Missed, PAUSED_REASON],
      [1_000, TaskStatus.Missed, PAUSED_REASON],
      [2_000, TaskStatus.Missed, PAUSED_REASON],
      [3_000, TaskStatus.Missed, PAUSED_REASON],
      [4_000, TaskStatus.Pending, null],
      [2_500, TaskStatus.Running, null],
      [3_500, TaskStatus.Succeeded, null],
    ]);
    expect((await rows('app = ?', ['r']))[0].status).toBe(TaskStatus.Pending);
    const plan = (await db.dataSource.query(`EXPLAIN ${MISS_PAUSED_SQL}`, [TaskStatus.Missed, PAUSED_REASON, 0, T, T + 1, TaskStatus.Pending, 'p', 10])) as { key: string | null; Extra: string | null }[];
    expect(plan[0].key).toBe('idx_outcome_run_at');
    expect(plan[0].Extra ?? '').not.toContain('filesort');
  });

  it('never lists a fire of a pause interval as overdue (an ended pause within the horizon too), but does list the rest', async () => {
    await db.dataSource.query('DELETE FROM tasks');
    await insert('p', '1', T - 1_000); // p paused from T on: before it
    await insert('p', '1', T + 1_000); // in it
    await insert('q', '2', T + 2_000); // q's ended pause [T + 1 s, T + 5 s)
    await insert('q', '2', T + 6_000); // after it
    await insert('old', '3', T - 2 * H - 60_000); // in a pause that ended two hours ago
    await insert('r', '4', T + 1_000); // never paused
    const now = T + 10 * 60_000;
    const fires = async (since: number) => (await ledger.overdue(now, now, 100, since)).map((f) => `${f.timerId}@${f.runAt - T}`);
    expect(await fires(now - H)).toEqual([`3@${-2 * H - 60_000}`, '1@-1000', '4@1000', '2@6000']);
    // With every ended pause excluded (the default), q's and old's intervals are left out as well.
    expect(await fires(0)).toEqual(['1@-1000', '4@1000', '2@6000']);
  });

  it('deletes a timer\'s pending fires after an instant (and before a bound), in batches, leaving due, claimed and other timers\' fires', async () => {
    await db.dataSource.query('DELETE FROM tasks');
    const many = Array.from({ length: 5_003 }, (_, i) => ({ app: 'p', timerId: '9', runAt: T + i * 1_000 }));
    await tasks.insertIgnore(many);
    await insert('p', '9', T - 1_000);
    await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = 9 AND run_at = ?', [TaskStatus.Running, T + 2_000]);
    await insert('p', '10', T + 5_000);
    const deleted = await db.dataSource.transaction((m) => tasks.deletePendingAfter('9', T, m, T + 10_000));
    expect(deleted).toBe(8); // T + 1 s .. T + 9 s, but the claimed one
    expect(await db.dataSource.transaction((m) => tasks.deletePendingAfter('9', T, m))).toBe(5_003 - 10);
    expect((await rows('timer_id = 9', [])).map((r) => [Number(r.run_at) - T, r.status])).toEqual([
      [-1_000, TaskStatus.Pending],
      [0, TaskStatus.Pending],
      [2_000, TaskStatus.Running],
    ]);
    expect(await rows('timer_id = 10', [])).toHaveLength(1);
  });
});
