import type { EntityManager } from 'typeorm';
import { AppRepository, DEADLOCK_ATTEMPTS, isDeadlockError, runInTransaction, TransactionDeadlockError } from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

describe('runInTransaction against a real MariaDB deadlock', () => {
  let db: FreshDatabase;

  beforeAll(async () => {
    db = await freshDatabase();
    const apps = new AppRepository(db.dataSource);
    for (const app of ['left', 'right']) await apps.create(app);
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** Resolves once `n` callers have arrived: both transactions hold their first row lock. */
  function barrier(n: number): () => Promise<void> {
    let arrived = 0;
    let open!: () => void;
    const all = new Promise<void>((r) => (open = r));
    return () => {
      if (++arrived === n) open();
      return all;
    };
  }

  const lockApp = (m: EntityManager, app: string) => m.query('SELECT app FROM apps WHERE app = ? FOR UPDATE', [app]);

  /** Locks `first`, waits (on its first attempt only) until the other side holds its own first lock, then locks `second`. */
  function crossed(first: string, second: string, attempts: { n: number }, meet: () => Promise<void>) {
    return async (m: EntityManager) => {
      attempts.n++;
      await lockApp(m, first);
      if (attempts.n === 1) await meet();
      await lockApp(m, second);
      await m.query('UPDATE apps SET paused_at = NULL WHERE app = ?', [first]);
      return first;
    };
  }

  it('control: two transactions locking the same rows in opposite orders deadlock, and InnoDB rolls one back (1213)', async () => {
    const meet = barrier(2);
    const results = await Promise.allSettled([
      db.dataSource.transaction(crossed('left', 'right', { n: 0 }, meet)),
      db.dataSource.transaction(crossed('right', 'left', { n: 0 }, meet)),
    ]);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(isDeadlockError(failed[0].reason)).toBe(true);
  });

  it('runs the deadlock victim again from the start, so both transactions commit', async () => {
    const meet = barrier(2);
    const a = { n: 0 };
    const b = { n: 0 };
    const results = await Promise.all([
      runInTransaction(db.dataSource, crossed('left', 'right', a, meet)),
      runInTransaction(db.dataSource, 'READ COMMITTED', crossed('right', 'left', b, meet)),
    ]);
    expect(results).toEqual(['left', 'right']);
    // One side ran once, the victim twice.
    expect([a.n, b.n].sort()).toEqual([1, 2]);
  });

  it('gives up after DEADLOCK_ATTEMPTS with TransactionDeadlockError, and passes any other error on at once', async () => {
    let calls = 0;
    const deadlock = Object.assign(new Error('Deadlock found when trying to get lock'), { driverError: { errno: 1213, code: 'ER_LOCK_DEADLOCK' } });
    await expect(
      runInTransaction(db.dataSource, async () => {
        calls++;
        throw deadlock;
      }),
    ).rejects.toBeInstanceOf(TransactionDeadlockError);
    expect(calls).toBe(DEADLOCK_ATTEMPTS);

    calls = 0;
    await expect(
      runInTransaction(db.dataSource, async (m) => {
        calls++;
        await m.query('SELECT no_such_column FROM apps');
      }),
    ).rejects.toThrow(/no_such_column/);
    expect(calls).toBe(1);
  });
});
