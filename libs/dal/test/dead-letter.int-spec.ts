import { AppRepository, DeadLetterRepository, PURGE_BATCH, TaskStatus, TimerRepository } from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

describe('dead letters in MySQL against a real MariaDB', () => {
  let db: FreshDatabase;
  let letters: DeadLetterRepository;
  const T = 1_893_456_000_000;

  async function insert(app: string, timerId: string, runAt: number, status: number, attempt = 2) {
    await db.dataSource.query('INSERT INTO tasks (app, timer_id, run_at, status, attempt, error) VALUES (?, CAST(? AS UNSIGNED), ?, ?, ?, ?)', [app, timerId, runAt, status, attempt, 'HTTP 500']);
  }
  const state = async (timerId: string, runAt: number) =>
    ((await db.dataSource.query('SELECT status, attempt, dead_letter_at FROM tasks WHERE timer_id = ? AND run_at = ?', [timerId, runAt])) as { status: number; attempt: number; dead_letter_at: string | null }[])[0];

  beforeAll(async () => {
    db = await freshDatabase();
    letters = new DeadLetterRepository(db.dataSource);
    const apps = new AppRepository(db.dataSource);
    for (const app of ['a', 'b']) await apps.create(app);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('keeps dead_letter_at to failed, unpurged fires, and reads an app\'s letters through idx_app_dead_letter', async () => {
    await insert('a', '1', T, TaskStatus.Failed);
    await insert('a', '1', T + 1, TaskStatus.Succeeded);
    await insert('a', '2', T + 2, TaskStatus.Failed);
    await insert('b', '3', T, TaskStatus.Failed);
    expect(Number((await state('1', T)).dead_letter_at)).toBe(T);
    expect((await state('1', T + 1)).dead_letter_at).toBeNull();

    const { items, total } = await letters.list('a', { page: 1, size: 10 });
    expect(total).toBe(2);
    expect(items.map((l) => `${l.timerId}-${l.runAt}`)).toEqual([`2-${T + 2}`, `1-${T}`]);
    // No timer row (deleted long ago, or a bare row here): the reason falls back to 'not retryable'.
    expect(items[0]).toMatchObject({ attempts: 2, error: 'HTTP 500', httpStatus: null, reason: 'not retryable' });
    expect((await letters.list('a', { page: 2, size: 1 })).items.map((l) => l.runAt)).toEqual([T]);

    const [plan] = (await db.dataSource.query('EXPLAIN SELECT id FROM tasks WHERE app = ? AND dead_letter_at IS NOT NULL ORDER BY dead_letter_at DESC LIMIT 10', ['a'])) as { key: string }[];
    expect(plan.key).toBe('idx_app_dead_letter');
  });

  it('reopens the selected letters of one app for a replay, and restores them as they were', async () => {
    const reopened = await db.dataSource.transaction((m) => letters.reopen('a', { all: true }, 1, m));
    expect(reopened).toEqual([{ id: expect.any(String), timerId: '1', runAt: T, attempt: 2 }]);
    expect(await state('1', T)).toMatchObject({ status: TaskStatus.Pending, attempt: 0, dead_letter_at: null });
    expect(await letters.count('a', { all: true })).toBe(1);
    // Another app's fire named by id is not touched.
    expect(await db.dataSource.transaction((m) => letters.reopen('a', { fireIds: [{ timerId: '3', runAt: T }] }, 10, m))).toEqual([]);
    expect(await state('3', T)).toMatchObject({ status: TaskStatus.Failed });

    expect(await letters.restore(reopened)).toBe(1);
    expect(await state('1', T)).toMatchObject({ status: TaskStatus.Failed, attempt: 2 });
    // A reopened fire a claim took since is left alone.
    const again = await db.dataSource.transaction((m) => letters.reopen('a', { timerId: '1' }, 10, m));
    await db.dataSource.query('UPDATE tasks SET status = ?, attempt = 1 WHERE timer_id = 1 AND run_at = ?', [TaskStatus.Running, T]);
    expect(await letters.restore(again)).toBe(0);
    expect(await state('1', T)).toMatchObject({ status: TaskStatus.Running, attempt: 1 });
  });

  it('purges in statements of PURGE_BATCH until none is left, one app only', async () => {
    const n = PURGE_BATCH + 7;
    await db.dataSource.query(
      `INSERT INTO tasks (app, timer_id, run_at, status) SELECT 'a', 9, ? + seq, ? FROM seq_1_to_${n}`,
      [T, TaskStatus.Failed],
    );
    const before = await letters.count('b', { all: true });
    expect(await letters.purge('a', { timerId: '9' }, T)).toBe(n);
    expect(await letters.count('a', { timerId: '9' })).toBe(0);
    expect(await letters.count('b', { all: true })).toBe(before);
    expect(await letters.purge('a', { fireIds: [{ timerId: '2', runAt: T + 2 }] }, T)).toBe(1);
    expect((await letters.list('a', { page: 1, size: 10 })).total).toBe(0);
  });

  it('stores an app\'s failure webhook and finds the app and webhook of dead-lettered fires', async () => {
    expect(await letters.setFailureWebhook('a', { url: 'https://hooks.example.com/f', headers: { Authorization: 'Bearer x' } })).toBe(true);
    expect(await letters.setFailureWebhook('a', { url: 'https://hooks.example.com/f', headers: { Authorization: 'Bearer x' } })).toBe(true);
    expect(await letters.setFailureWebhook('nobody', null)).toBe(false);
    await db.dataSource.query("UPDATE apps SET signing_secret = 's' WHERE app = 'a'");
    const targets = await letters.targetsOf([{ timerId: '2', runAt: T + 2 }, { timerId: '3', runAt: T }, { timerId: '4', runAt: T }, { timerId: 'x', runAt: 1 }]);
    expect(targets.get(`2-${T + 2}`)).toEqual({ app: 'a', webhook: { url: 'https://hooks.example.com/f', headers: { Authorization: 'Bearer x' } }, signingSecret: 's' });
    expect(targets.get(`3-${T}`)).toEqual({ app: 'b', webhook: null, signingSecret: null });
    expect(targets.size).toBe(2);
  });

  it("takes a timer's own failure webhook over its app's, and the app's when the timer has none", async () => {
    const timers = new TimerRepository(db.dataSource);
    const own = { url: 'https://hooks.example.com/timer', headers: { 'X-Team': ['pay'] } };
    const withHook = await timers.insert({ app: 'a', name: 'own-hook', runAt: T, notifyHttpParam: { url: 'https://cb.example/x', method: 'POST' }, failureWebhook: own });
    const without = await timers.insert({ app: 'a', name: 'app-hook', runAt: T, notifyHttpParam: { url: 'https://cb.example/x', method: 'POST' } });
    // Run times no earlier test used: the bare timer ids above may be these timers' ids.
    const at = T + 600_000;
    await insert('a', withHook, at, TaskStatus.Failed);
    await insert('a', without, at, TaskStatus.Failed);
    const targets = await letters.targetsOf([{ timerId: withHook, runAt: at }, { timerId: without, runAt: at }]);
    expect(targets.get(`${withHook}-${at}`)).toEqual({ app: 'a', webhook: own, signingSecret: 's' });
    expect(targets.get(`${without}-${at}`)?.webhook).toEqual({ url: 'https://hooks.example.com/f', headers: { Authorization: 'Bearer x' } });
  });
});
