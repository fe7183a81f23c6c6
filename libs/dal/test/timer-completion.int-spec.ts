import { runInTransaction, TaskRepository, TaskStatus, TimerRepository, TimerStatus, TimerVersionRepository } from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

// Bounds, intervals and completion against a real MariaDB: the new columns round-trip through insert,
// update and the version snapshot; the completion sweep's queries find exactly the finished timers.
describe('timer bounds and completion against a real MariaDB', () => {
  let db: FreshDatabase;
  let timers: TimerRepository;
  let tasks: TaskRepository;
  let versions: TimerVersionRepository;
  const NOW = Date.UTC(2031, 0, 1, 12);
  const W = 3_600_000;
  const callback = { url: 'https://example.com/hook', method: 'POST' };

  beforeAll(async () => {
    db = await freshDatabase();
    timers = new TimerRepository(db.dataSource);
    tasks = new TaskRepository(db.dataSource);
    versions = new TimerVersionRepository(db.dataSource);
  });
  afterAll(async () => {
    await db?.drop();
  });
  beforeEach(async () => {
    for (const t of ['tasks', 'timer_versions', 'timers', 'migrator_windows']) await db.dataSource.query(`DELETE FROM ${t}`);
    // The migrator completed the windows around NOW.
    await db.dataSource.query('INSERT INTO migrator_windows (window_start, window_end) VALUES (?, ?), (?, ?)', [NOW - 2 * W, NOW - W, NOW - W, NOW]);
  });

  const enabled = (name: string, finalAt: number | null, extra: object = {}) =>
    timers.create({ app: 'done', name, everyMs: 1_000, startAt: NOW - W, finalAt, notifyHttpParam: callback, status: TimerStatus.Enabled, ...extra });
  const complete = (id: string, expandableFrom = NOW - 4 * W) => runInTransaction(db.dataSource, (m) => timers.completeIfSettled(id, NOW, expandableFrom, m));

  it('stores and reads every_ms, start_at, end_at, max_fires and final_at; an update and a version snapshot carry them', async () => {
    const t = await timers.create({ app: 'a', name: 'every', everyMs: 90_000, startAt: NOW, endAt: NOW + W, maxFires: 5, finalAt: NOW + 360_000, notifyHttpParam: callback });
    expect(await timers.findLive('a', t.id)).toMatchObject({ cron: null, runAt: null, everyMs: 90_000, startAt: NOW, endAt: NOW + W, maxFires: 5, finalAt: NOW + 360_000 });
    const oneShot = await timers.create({ app: 'a', name: 'once', runAt: NOW + 7, notifyHttpParam: callback });
    expect(oneShot).toMatchObject({ runAt: NOW + 7, finalAt: NOW + 7, everyMs: null });

    const hook = { url: 'https://hooks.example/t', headers: { Authorization: ['Bearer x'] } };
    const fields = { name: 'every', cron: '* * * * *', runAt: null, everyMs: null, timeZone: 'UTC', dstGap: 'skip', dstOverlap: 'both', startAt: NOW + 1, endAt: null, maxFires: 2, finalAt: NOW + 120_000 };
    await timers.update('a', t.id, { ...fields, notifyHttpParam: callback, maxAttempts: 3, backoffMs: 1000, misfirePolicy: 'fire_late', overlapPolicy: 'allow', catchupPolicy: null, catchupWindowMs: null, jitterMs: 0, failureWebhook: hook });
    await versions.snapshot(t.id, 'update', NOW);
    const [latest] = (await versions.list(t.id, { page: 1, size: 1 })).items;
    expect(await timers.findLive('a', t.id)).toMatchObject({ dstGap: 'skip', dstOverlap: 'both' });
    expect(latest).toMatchObject({ failureWebhook: hook });
    expect(await timers.findLive('a', t.id)).toMatchObject({ failureWebhook: hook });
    expect(latest).toMatchObject({ change: 'update', cron: '* * * * *', dstGap: 'skip', dstOverlap: 'both', everyMs: null, startAt: NOW + 1, endAt: null, maxFires: 2, finalAt: NOW + 120_000 });
  });

  it('finds enabled timers whose final instant passed, in final_at order from a cursor, and nothing else', async () => {
    const a = await enabled('a', NOW - 10);
    const b = await enabled('b', NOW - 20);
    const c = await enabled('c', NOW - 20);
    await enabled('future', NOW + 1);
    await enabled('unbounded', null);
    await enabled('disabled', NOW - 30, { status: TimerStatus.Disabled });
    const deleted = await enabled('deleted', NOW - 30);
    await timers.softDelete('done', deleted.id, undefined, NOW);

    const all = await timers.finishedCandidates(NOW, null, 10);
    expect(all.map((x) => x.id)).toEqual([b.id, c.id, a.id]);
    expect(all[0]).toEqual({ id: b.id, app: 'done', finalAt: NOW - 20 });
    const page = await timers.finishedCandidates(NOW, { finalAt: NOW - 20, id: b.id }, 1);
    expect(page.map((x) => x.id)).toEqual([c.id]);
  });

  it('completes a timer only when no fire is open and no migrator run can still create one, bumping its version', async () => {
    const settled = await enabled('settled', NOW - 10);
    await tasks.insertIgnore([{ app: 'done', timerId: settled.id, runAt: NOW - 10 }]);
    await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ?', [TaskStatus.Succeeded, settled.id]);
    const waiting = await enabled('retry-waiting', NOW - 10);
    await tasks.insertIgnore([{ app: 'done', timerId: waiting.id, runAt: NOW - 10 }]);
    await db.dataSource.query('UPDATE tasks SET status = ?, attempt = 1 WHERE timer_id = ?', [TaskStatus.Running, waiting.id]);
    // A run now after the last fire, still pending.
    const ranNow = await enabled('ran-now', NOW - 10);
    await tasks.insertIgnore([{ app: 'done', timerId: ranNow.id, runAt: NOW - 5 }]);
    // Its final instant lies in a window the migrator has not completed (and within its catch-up).
    const unmigrated = await enabled('unmigrated', NOW - 3 * W);

    expect(await complete(settled.id)).toBe(true);
    expect(await complete(settled.id)).toBe(false);
    expect(await timers.findLive('done', settled.id)).toMatchObject({ status: TimerStatus.Completed, version: 2 });
    expect(await complete(waiting.id)).toBe(false);
    expect(await complete(ranNow.id)).toBe(false);
    expect(await complete(unmigrated.id, NOW - 4 * W)).toBe(false);
    // Behind the catch-up horizon the migrator creates nothing: no window needed.
    expect(await complete(unmigrated.id, NOW - 2 * W)).toBe(true);

    await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id IN (?, ?)', [TaskStatus.Missed, waiting.id, ranNow.id]);
    expect(await complete(waiting.id)).toBe(true);
    expect(await complete(ranNow.id)).toBe(true);
    expect(await timers.finishedCandidates(NOW, null, 10)).toEqual([]);
  });
});
