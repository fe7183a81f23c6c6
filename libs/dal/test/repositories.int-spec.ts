import { createHash } from 'crypto';
import {
  AppRepository,
  DuplicateAppError,
  DuplicateTimerNameError,
  NewTimer,
  RecordsFilter,
  runInTransaction,
  SecretCipher,
  TaskEntity,
  TaskRepository,
  TaskStatus,
  TimerDefinitionRepository,
  TimerEntity,
  TimerRepository,
  TimerStatus,
  TimerVersionRepository,
  truncateUtf8,
  TASK_OUTPUT_MAX,
} from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

describe('repositories against a real MariaDB', () => {
  let db: FreshDatabase;
  let timers: TimerRepository;
  let tasks: TaskRepository;
  let apps: AppRepository;

  beforeAll(async () => {
    db = await freshDatabase();
    timers = new TimerRepository(db.dataSource);
    tasks = new TaskRepository(db.dataSource);
    apps = new AppRepository(db.dataSource);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const callback = { url: 'https://example.com/hook', method: 'POST', header: { 'X-A': ['1', '2'] }, body: '{"a":1}' };
  const newTimer = (app: string, name: string, extra: Partial<NewTimer> = {}): NewTimer => ({
    app,
    name,
    cron: '*/5 * * * * *',
    timeZone: 'Europe/Berlin',
    notifyHttpParam: callback,
    ...extra,
  });

  describe('TimerRepository', () => {
    it('creates a timer and reads it back with string ids, number instants and the callback JSON', async () => {
      const t = await timers.create(newTimer('app-a', 'first'));
      expect(typeof t.id).toBe('string');
      expect(t.id).toMatch(/^\d+$/);
      expect(t).toMatchObject({
        app: 'app-a',
        name: 'first',
        liveName: 'first',
        cron: '*/5 * * * * *',
        runAt: null,
        timeZone: 'Europe/Berlin',
        status: TimerStatus.Disabled,
        maxAttempts: 3,
        backoffMs: 1000,
        misfirePolicy: 'fire_late',
        version: 1,
        deletedAt: null,
      });
      expect(t.notifyHttpParam).toEqual(callback);
      expect(t.createdAt).toBeInstanceOf(Date);
      const oneShot = await timers.create(newTimer('app-a', 'once', { cron: null, runAt: 1_790_000_000_123, status: TimerStatus.Enabled, maxAttempts: 5 }));
      const read = await timers.findLive('app-a', oneShot.id);
      expect(read).toMatchObject({ id: oneShot.id, runAt: 1_790_000_000_123, cron: null, status: TimerStatus.Enabled, maxAttempts: 5 });
      expect(typeof read!.runAt).toBe('number');
    });

    it('refuses a second live timer with the same name in the app, and allows it in another app', async () => {
      await timers.create(newTimer('app-a', 'dup'));
      await expect(timers.create(newTimer('app-a', 'dup'))).rejects.toBeInstanceOf(DuplicateTimerNameError);
      await expect(timers.create(newTimer('app-b', 'dup'))).resolves.toBeDefined();
    });

    it('lets a name be reused after a soft delete; the deleted timer is no longer found', async () => {
      const old = await timers.create(newTimer('app-a', 'reuse'));
      expect(await timers.softDelete('app-a', old.id, undefined, 1_700_000_000_000)).toBe(true);
      expect(await timers.findLive('app-a', old.id)).toBeNull();
      expect(await timers.softDelete('app-a', old.id)).toBe(false); // already deleted
      expect(await timers.setStatus('app-a', old.id, TimerStatus.Enabled)).toBe(false);
      const again = await timers.create(newTimer('app-a', 'reuse'));
      expect(again.id).not.toBe(old.id);
      const [row] = (await db.dataSource.query('SELECT live_name, deleted_at, status FROM timers WHERE id = ?', [old.id])) as {
        live_name: string | null;
        deleted_at: number | string;
        status: number;
      }[];
      expect(row.live_name).toBeNull();
      expect(Number(row.deleted_at)).toBe(1_700_000_000_000);
      expect(row.status).toBe(TimerStatus.Disabled);
    });

    it('isolates apps: another app cannot find, list, enable or delete a timer by its id', async () => {
      const t = await timers.create(newTimer('owner', 'private'));
      expect(await timers.findLive('intruder', t.id)).toBeNull();
      expect(await timers.setStatus('intruder', t.id, TimerStatus.Enabled)).toBe(false);
      expect(await timers.softDelete('intruder', t.id)).toBe(false);
      expect((await timers.list('intruder', { page: 1, size: 100 })).items.map((x) => x.id)).not.toContain(t.id);
      const still = await timers.findLive('owner', t.id);
      expect(still).toMatchObject({ status: TimerStatus.Disabled, deletedAt: null, version: 1 });
      // Ids that are not plain decimals match nothing (MySQL would read "12abc" as 12).
      expect(await timers.findLive('owner', `${t.id}abc`)).toBeNull();
      expect(await timers.findLive('owner', `${t.id}.0`)).toBeNull();
      expect(await timers.findLive('owner', '')).toBeNull();
    });

    it('sets status (bumping the version) and reports whether the live timer exists', async () => {
      const t = await timers.create(newTimer('app-s', 'status'));
      expect(await timers.setStatus('app-s', t.id, TimerStatus.Enabled)).toBe(true);
      expect(await timers.setStatus('app-s', t.id, TimerStatus.Enabled)).toBe(true); // already enabled: still found
      expect(await timers.findLive('app-s', t.id)).toMatchObject({ status: TimerStatus.Enabled, version: 3 });
      expect(await timers.setStatus('app-s', '999999999', TimerStatus.Enabled)).toBe(false);
    });

    it('takes part in a transaction through the manager (rolled back together)', async () => {
      const t = await timers.create(newTimer('app-tx', 'tx'));
      await expect(
        runInTransaction(db.dataSource, async (m) => {
          const locked = await timers.findLiveForUpdate('app-tx', t.id, m);
          expect(locked?.id).toBe(t.id);
          await timers.setStatus('app-tx', t.id, TimerStatus.Enabled, m);
          await tasks.insertIgnore([{ app: 'app-tx', timerId: t.id, runAt: 1_000 }], m);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await timers.findLive('app-tx', t.id)).toMatchObject({ status: TimerStatus.Disabled });
      expect(await tasks.find(t.id, 1_000)).toBeNull();
    });

    it('lists in a stable id DESC order across pages, with total, status filter and literal % and _ in name search', async () => {
      const app = 'app-list';
      const names = ['alpha', 'beta', '100%', '100 percent', 'a_b', 'axb', 'gamma'];
      const created = [];
      for (const name of names) created.push(await timers.create(newTimer(app, name)));
      await timers.setStatus(app, created[1].id, TimerStatus.Enabled);
      await timers.setStatus(app, created[6].id, TimerStatus.Enabled);
      const deleted = await timers.create(newTimer(app, 'deleted'));
      await timers.softDelete(app, deleted.id);

      const byIdDesc = [...created].sort((x, y) => (BigInt(y.id) > BigInt(x.id) ? 1 : -1)).map((t) => t.id);
      const pages = [];
      for (let page = 1; page <= 3; page++) pages.push(await timers.list(app, { page, size: 3 }));
      expect(pages.map((p) => p.total)).toEqual([7, 7, 7]);
      expect(pages.flatMap((p) => p.items.map((t) => t.id))).toEqual(byIdDesc);
      expect(pages[2].items).toHaveLength(1);
      expect((await timers.list(app, { page: 4, size: 3 })).items).toEqual([]);

      const search = async (name: string) => (await timers.list(app, { page: 1, size: 10, name })).items.map((t) => t.name).sort();
      expect(await search('%')).toEqual(['100%']);
      expect(await search('_')).toEqual(['a_b']);
      expect(await search('a_')).toEqual(['a_b']);
      expect(await search('100')).toEqual(['100 percent', '100%']);
      expect(await search('!')).toEqual([]);
      expect(await search('ALPHA')).toEqual([]); // utf8mb4_bin: case-sensitive
      expect(await search('eta')).toEqual(['beta']);

      const enabled = await timers.list(app, { page: 1, size: 10, status: TimerStatus.Enabled });
      expect(enabled.total).toBe(2);
      expect(enabled.items.map((t) => t.name)).toEqual(['gamma', 'beta']);
      await expect(timers.list(app, { page: 0, size: 10 })).rejects.toThrow(RangeError);
      await expect(timers.list(app, { page: 1, size: 10_000 })).rejects.toThrow(RangeError);
    });

    it('reads only the enabled live timers with a fire before the window end, in (next_fire_at, id) order, and advances them', async () => {
      const app = 'app-due';
      const W = 4_000_000_000_000;
      const at = [W - 10, 0, W + 5, W - 10, null, W - 20, W - 30]; // 0: not known, null: no fire left
      const ids: string[] = [];
      for (let i = 0; i < at.length; i++) {
        const id = (await timers.create(newTimer(app, `d${i}`, { status: TimerStatus.Enabled }))).id;
        if (at[i] !== 0) await timers.setNextFireAt(id, at[i]);
        ids.push(id);
      }
      await timers.setStatus(app, ids[5], TimerStatus.Disabled);
      await timers.softDelete(app, ids[6]);
      const due = async (after: { nextFireAt: number; id: string } | null, limit: number, range?: { afterId: string | null; upToId?: string }) =>
        (await timers.duePage(W, after, limit, range)).filter((t) => t.app === app).map((t) => t.id);
      // 0 (not known), past the window, no fire left, disabled and deleted are not read.
      expect(await due(null, 100)).toEqual([ids[0], ids[3]]);
      expect(await due({ nextFireAt: W - 10, id: ids[0] }, 100)).toEqual([ids[3]]);
      expect(await due(null, 1)).toEqual([ids[0]]);
      expect(await due(null, 100, { afterId: ids[0], upToId: ids[3] })).toEqual([ids[3]]);
      expect(await timers.dueBoundaries(W, 1, 100)).toEqual(await due(null, 100).then((d) => [d[0]]));

      // Advances apply only at the version read and only forward; an unknown one is resolved.
      const [t0, t3] = await Promise.all([timers.findLive(app, ids[0]), timers.findLive(app, ids[3])]);
      const before = (await timers.findLive(app, ids[0]))!.updatedAt;
      expect(
        await timers.advanceNextFire([
          { id: ids[0], version: t0!.version, nextFireAt: W + 60_000 },
          { id: ids[3], version: t3!.version - 1, nextFireAt: W + 60_000 }, // edited since: left alone
          { id: ids[2], version: 1, nextFireAt: W - 1 }, // backwards: left alone
        ]),
      ).toBe(1);
      expect(await due(null, 100)).toEqual([ids[3]]);
      const advanced = (await timers.findLive(app, ids[0]))!;
      expect(advanced).toMatchObject({ nextFireAt: W + 60_000, version: t0!.version });
      expect(advanced.updatedAt).toEqual(before); // the executor's definition cache does not see it
      expect(await timers.advanceNextFire([{ id: ids[3], version: t3!.version, nextFireAt: null }])).toBe(1);
      expect((await timers.findLive(app, ids[3]))!.nextFireAt).toBeNull();
      while ((await timers.resolveUnknownNextFire(W - 5, 1000)) === 1000);
      expect((await timers.findLive(app, ids[1]))!.nextFireAt).toBe(W - 5);
      expect(await due(null, 100)).toEqual([ids[1]]);
    });

    it('inserts a batch with the rows one create writes, defaults and every optional field alike', async () => {
      const full: Partial<NewTimer> = {
        cron: null,
        everyMs: 90_000,
        startAt: 1_800_000_000_000,
        endAt: 1_900_000_000_000,
        maxFires: 12,
        finalAt: 1_800_000_990_000,
        dstGap: 'skip',
        maxAttempts: 5,
        backoffMs: 2_500,
        misfirePolicy: 'skip',
        overlapPolicy: 'skip',
        catchupPolicy: 'all',
        catchupWindowMs: 60_000,
        jitterMs: 4_000,
        failureWebhook: { url: 'https://example.com/failed', headers: { 'X-B': ['b'] } },
        autoSpread: true,
        spreadOffsetMs: 1_000,
      };
      const defs = [newTimer('app-rows', 'plain'), newTimer('app-rows', 'full', full), newTimer('app-rows', 'once', { cron: null, runAt: 4_000_000_000_000 })];
      const strip = (t: TimerEntity | null) => {
        const { id: _id, name: _name, liveName: _live, createdAt: _c, updatedAt: _u, ...rest } = t!;
        return rest;
      };
      const single = await Promise.all(defs.map(async (d) => strip(await timers.create({ ...d, name: `single-${d.name}` }))));
      const ids = await runInTransaction(db.dataSource, (m) => timers.insertMany('app-rows', defs.map((d) => ({ ...d, name: `many-${d.name}` })), m));
      const many = await Promise.all(ids.map(async (id) => strip(await timers.findLive('app-rows', id))));
      expect(many[1]).toMatchObject({ everyMs: 90_000, maxAttempts: 5, failureWebhook: full.failureWebhook, autoSpread: true, spreadOffsetMs: 1_000, status: TimerStatus.Disabled, version: 1 });
      expect(many).toEqual(single);
    });

    it('inserts a batch enabled with its two versions as an insert, its create version, an enable and its version leave it', async () => {
      const versions = new TimerVersionRepository(db.dataSource);
      const at = 1_800_000_000_000;
      const defs = (prefix: string): NewTimer[] => [
        newTimer('app-batch', `${prefix}-plain`),
        newTimer('app-batch', `${prefix}-spread`, { autoSpread: true, jitterMs: 60_000, failureWebhook: { url: 'https://example.com/failed' } }),
        newTimer('app-batch', `${prefix}-moved`, { autoSpread: true, jitterMs: 60_000, runAt: 4_000_000_000_000, cron: null }),
      ];
      const enabled = [
        { spreadOffsetMs: null, nextFireAt: at + 5_000 },
        { spreadOffsetMs: 0, nextFireAt: at + 10_000 },
        { spreadOffsetMs: 0, nextFireAt: null },
      ];
      // Admission moved the third timer's fires by 7 s (setSpreadOffsets), the second fits as it is.
      const spread = [null, 0, 7_000];
      const stepByStep = await runInTransaction(db.dataSource, async (m) => {
        const ids = await timers.insertMany('app-batch', defs('steps'), m);
        await versions.snapshotMany(ids, 'create', at, m);
        await timers.markEnabledMany('app-batch', ids.map((id, i) => ({ id, spreadOffsetMs: spread[i], nextFireAt: enabled[i].nextFireAt })), m);
        await versions.snapshotMany(ids, 'enable', at, m);
        return ids;
      });
      const atOnce = await runInTransaction(db.dataSource, async (m) => {
        const ids = await timers.insertMany('app-batch', defs('once').map((d, i) => ({ ...d, enabled: enabled[i] })), m);
        expect(await timers.setSpreadOffsets('app-batch', [{ id: ids[2], spreadOffsetMs: 7_000 }], m)).toBe(1);
        await versions.snapshotCreatedEnabled(ids, at, m);
        return ids;
      });
      const rowsOf = async (ids: string[]) =>
        (await Promise.all(ids.map((id) => timers.findLive('app-batch', id)))).map((t) => {
          const { id: _id, name: _name, liveName: _live, createdAt: _c, updatedAt: _u, ...rest } = t!;
          return rest;
        });
      expect((await rowsOf(atOnce))[2]).toMatchObject({ status: TimerStatus.Enabled, version: 2, spreadOffsetMs: 7_000, nextFireAt: null });
      expect(await rowsOf(atOnce)).toEqual(await rowsOf(stepByStep));
      const historyOf = async (ids: string[]) =>
        Promise.all(
          ids.map(async (id) =>
            (await versions.list(id, { page: 1, size: 10 })).items.map((v) => {
              const { id: _id, timerId: _t, name: _name, ...rest } = v;
              return rest;
            }),
          ),
        );
      const history = await historyOf(atOnce);
      expect(history[2].map((v) => [v.version, v.change, v.status, v.spreadOffsetMs])).toEqual([
        [2, 'enable', TimerStatus.Enabled, 7_000],
        [1, 'create', TimerStatus.Disabled, null],
      ]);
      expect(history).toEqual(await historyOf(stepByStep));
      // Version 1's row id comes before version 2's, as when they were written one after the other.
      const [first, second] = (await db.dataSource.query('SELECT id FROM timer_versions WHERE timer_id = ? ORDER BY version', [atOnce[0]])) as { id: string }[];
      expect(BigInt(first.id) < BigInt(second.id)).toBe(true);
    });

    it('cuts the due timers into ranges of n by id (numeric order)', async () => {
      const W = 4_100_000_000_000;
      for (let i = 0; i < 12; i++) {
        const t = await timers.create(newTimer('app-ranges', `r${i}`, { status: TimerStatus.Enabled }));
        await timers.setNextFireAt(t.id, W - 1 - (i % 3)); // not in id order
      }
      const all = ((await db.dataSource.query('SELECT CAST(id AS CHAR) AS v FROM timers WHERE status = 2 AND next_fire_at > 0 AND next_fire_at < ? ORDER BY id', [W])) as { v: string }[]).map(
        (r) => r.v,
      );
      expect(all.length).toBeGreaterThanOrEqual(12);
      const expected: string[] = [];
      for (let i = 4; i < all.length - 1; i += 5) expected.push(all[i]);
      expect(await timers.dueBoundaries(W, 5, 1_000)).toEqual(expected);
      expect(await timers.dueBoundaries(W, 5, 1)).toEqual(expected.slice(0, 1));
      expect(await timers.dueBoundaries(W, all.length, 1_000)).toEqual([]); // all fit one range
      const inRange = await timers.duePage(W, null, 100, { afterId: expected[0], upToId: expected[1] });
      expect(inRange.map((t) => t.id).sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1))).toEqual(all.slice(5, 10));
      // The same timers counted, in all and by range (the migrator's estimate of a window's work).
      expect(await timers.countDue(W)).toBe(all.length);
      expect(await timers.countDue(W, { afterId: expected[0], upToId: expected[1] })).toBe(5);
      expect(await timers.countDue(W, { afterId: expected[0] })).toBe(all.length - 5);
    });
  });

  describe('TaskRepository', () => {
    const app = 'app-tasks';
    let timerId: string;
    /** Every record of one timer, future pending ones included. */
    const all = (id: string): RecordsFilter => ({ app, timerId: id, includePending: true, nowMs: 0 });
    beforeAll(async () => {
      timerId = (await timers.create(newTimer(app, 'tasks'))).id;
    });

    it('inserts idempotently: the same rows twice insert nothing the second time, and no duplicates', async () => {
      const rows = Array.from({ length: 2_500 }, (_, i) => ({ app, timerId, runAt: 1_000_000 + i * 1000 }));
      expect(await tasks.insertIgnore(rows)).toBe(2_500);
      expect(await tasks.insertIgnore(rows)).toBe(0);
      // Overlapping batch: only the new ones count; duplicates inside one batch too.
      const more = [...rows.slice(-10), { app, timerId, runAt: 9_999_000_000 }, { app, timerId, runAt: 9_999_000_000 }];
      expect(await tasks.insertIgnore(more)).toBe(1);
      const [{ n }] = (await db.dataSource.query('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ?', [timerId])) as { n: number | string }[];
      expect(Number(n)).toBe(2_501);
      expect(await tasks.insertIgnore([])).toBe(0);
      await expect(tasks.insertIgnore([{ app, timerId: 'x', runAt: 1 }])).rejects.toThrow(RangeError);
      await expect(tasks.insertIgnore([{ app, timerId, runAt: 1.5 }])).rejects.toThrow(RangeError);
      const row = await tasks.find(timerId, 1_000_000);
      expect(row).toMatchObject({ app, timerId, runAt: 1_000_000, status: TaskStatus.Pending, attempt: 0 });
      expect(typeof row!.id).toBe('string');
    });

    it('deletePending removes only pending fires of that timer', async () => {
      const other = (await timers.create(newTimer(app, 'other'))).id;
      const t = (await timers.create(newTimer(app, 'pending'))).id;
      await tasks.insertIgnore([1, 2, 3, 4, 5, 6].map((i) => ({ app, timerId: t, runAt: i * 1000 })));
      await tasks.insertIgnore([{ app, timerId: other, runAt: 1000 }]);
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at = 1000', [TaskStatus.Succeeded, t]);
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at = 2000', [TaskStatus.Failed, t]);
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at = 3000', [TaskStatus.Running, t]);
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at = 4000', [TaskStatus.Missed, t]);
      expect(await tasks.deletePending(t)).toBe(2);
      const left = (await tasks.records(all(t), { page: 1, size: 10 })).items.map((k) => [k.runAt, k.status]);
      expect(left).toEqual([
        [4000, TaskStatus.Missed],
        [3000, TaskStatus.Running],
        [2000, TaskStatus.Failed],
        [1000, TaskStatus.Succeeded],
      ]);
      expect(await tasks.find(other, 1000)).not.toBeNull();
      expect(await tasks.deletePending(t)).toBe(0);
    });

    it('pages records by run_at DESC, id DESC with a status filter', async () => {
      const t = (await timers.create(newTimer(app, 'records'))).id;
      await tasks.insertIgnore(Array.from({ length: 7 }, (_, i) => ({ app, timerId: t, runAt: (i + 1) * 60_000 })));
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at IN (60000, 180000, 300000)', [TaskStatus.Succeeded, t]);
      const p1 = await tasks.records(all(t), { page: 1, size: 3 });
      const p3 = await tasks.records(all(t), { page: 3, size: 3 });
      expect(p1.total).toBe(7);
      expect(p1.items.map((k) => k.runAt)).toEqual([420_000, 360_000, 300_000]);
      expect(p3.items.map((k) => k.runAt)).toEqual([60_000]);
      const ok = await tasks.records({ ...all(t), status: TaskStatus.Succeeded }, { page: 1, size: 10 });
      expect(ok.total).toBe(3);
      expect(ok.items.map((k) => k.runAt)).toEqual([300_000, 180_000, 60_000]);
      expect(ok.items.every((k: TaskEntity) => k.timerId === t)).toBe(true);
      expect(await tasks.records(all('nope'), { page: 1, size: 10 })).toEqual({ items: [], total: 0 });
    });

    it('stores a long output once truncated to the column', async () => {
      const t = (await timers.create(newTimer(app, 'output'))).id;
      await tasks.insertIgnore([{ app, timerId: t, runAt: 5 }]);
      const long = '€'.repeat(10_000);
      await db.dataSource.query('UPDATE tasks SET output = ? WHERE timer_id = ? AND run_at = 5', [truncateUtf8(long, TASK_OUTPUT_MAX), t]);
      const row = await tasks.find(t, 5);
      expect(row!.output!.length).toBeGreaterThan(1000);
      expect(long.startsWith(row!.output!)).toBe(true);
    });

    it('purges finished records older than the cutoff in batches, keeping pending/running and newer ones', async () => {
      const t = (await timers.create(newTimer(app, 'purge'))).id;
      const base = 5_000_000_000;
      await tasks.insertIgnore(Array.from({ length: 25 }, (_, i) => ({ app, timerId: t, runAt: base + i })));
      // 0..19 old: 0..16 finished (mixed), 17 pending, 18 running, 19 pending; 20..24 newer (finished).
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at BETWEEN ? AND ?', [TaskStatus.Succeeded, t, base, base + 9]);
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at BETWEEN ? AND ?', [TaskStatus.Failed, t, base + 10, base + 14]);
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at BETWEEN ? AND ?', [TaskStatus.Missed, t, base + 15, base + 16]);
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at = ?', [TaskStatus.Running, t, base + 18]);
      await db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at >= ?', [TaskStatus.Succeeded, t, base + 20]);
      // Other tests' finished rows are older than `base` too; count what this purge must remove.
      const [{ n }] = (await db.dataSource.query('SELECT COUNT(*) AS n FROM tasks WHERE run_at < ? AND status IN (2, 3, 4)', [base + 20])) as {
        n: number | string;
      }[];
      // maxBatches bounds one call: 2 statements of 1 row, whatever is left.
      expect(await tasks.purgeOlderThan(base + 20, 1, 2)).toBe(2);
      const statements: string[] = [];
      const original = db.dataSource.query.bind(db.dataSource);
      const spy = jest.spyOn(db.dataSource, 'query').mockImplementation((sql: string, params?: unknown[]) => {
        statements.push(sql);
        return original(sql, params);
      });
      const purged = await tasks.purgeOlderThan(base + 20, 4);
      spy.mockRestore();
      expect(purged).toBe(Number(n) - 2);
      expect(statements.length).toBe(Math.floor((Number(n) - 2) / 4) + 1);
      expect(statements.every((s) => /LIMIT \?$/.test(s))).toBe(true);
      const left = (await tasks.records(all(t), { page: 1, size: 100 })).items.map((k) => k.runAt - base).sort((x, y) => x - y);
      expect(left).toEqual([17, 18, 19, 20, 21, 22, 23, 24]);
      expect(await tasks.purgeOlderThan(base + 20, 4)).toBe(0);
    });
  });

  describe('AppRepository', () => {
    it('creates apps once, ensures idempotently and finds them', async () => {
      const a = await apps.create('app-new');
      expect(a).toMatchObject({ app: 'app-new', signingSecret: null });
      await expect(apps.create('app-new')).rejects.toBeInstanceOf(DuplicateAppError);
      expect((await apps.ensure('app-new')).app).toBe('app-new');
      expect((await apps.ensure('app-ensured')).app).toBe('app-ensured');
      expect((await apps.ensure('app-ensured')).app).toBe('app-ensured');
      expect(await apps.find('app-ensured')).not.toBeNull();
      expect(await apps.find('app-missing')).toBeNull();
    });

    it('issues tokens stored only as their sha256, resolves them to the app, and revokes them', async () => {
      await apps.create('app-tok');
      const { id, token } = await apps.addToken('app-tok', 'ci');
      expect(token).toMatch(/^tmr_[A-Za-z0-9_-]{43}$/);
      const rows = (await db.dataSource.query('SELECT token_hash, label FROM app_tokens WHERE id = ?', [id])) as { token_hash: string; label: string }[];
      expect(rows).toEqual([{ token_hash: createHash('sha256').update(token).digest('hex'), label: 'ci' }]);
      const dump = JSON.stringify(await db.dataSource.query('SELECT * FROM app_tokens'));
      expect(dump).not.toContain(token);
      expect(dump).not.toContain(token.slice(4));

      const second = await apps.addToken('app-tok');
      expect(second.token).not.toBe(token);
      expect(await apps.appForToken(token)).toBe('app-tok');
      expect(await apps.appForToken(second.token)).toBe('app-tok');
      expect(await apps.appForToken(`${token}x`)).toBeNull();
      expect(await apps.appForToken('')).toBeNull();

      expect(await apps.revokeToken('other-app', id)).toBe(false); // not its token
      expect(await apps.appForToken(token)).toBe('app-tok');
      expect(await apps.revokeToken('app-tok', id)).toBe(true);
      expect(await apps.revokeToken('app-tok', id)).toBe(false);
      expect(await apps.appForToken(token)).toBeNull();
      expect(await apps.appForToken(second.token)).toBe('app-tok');
      // A token for an app not created yet creates it.
      const implicit = await apps.addToken('app-implicit');
      expect(await apps.appForToken(implicit.token)).toBe('app-implicit');
    });

    it('rotates the signing secret, returning a new one each time', async () => {
      await apps.ensure('app-sec');
      const s1 = await apps.rotateSecret('app-sec');
      const s2 = await apps.rotateSecret('app-sec');
      expect(s1).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(s1.slice(6), 'base64')).toHaveLength(32);
      expect(s2).not.toBe(s1);
      expect((await apps.find('app-sec'))!.signingSecret).toBe(s2);
      expect((await apps.find('app-sec'))!.previousSigningSecret).toBeNull();
    });

    it('keeps the replaced secret with the end of its overlap, and seals both under a key', async () => {
      const cipher = new SecretCipher(Buffer.alloc(32, 5));
      const sealedApps = new AppRepository(db.dataSource, cipher);
      const defs = new TimerDefinitionRepository(db.dataSource, cipher);
      const t = await timers.create(newTimer('app-rot', 'r'));
      const s1 = await sealedApps.rotateSecret('app-rot');
      const s2 = await sealedApps.rotateSecret('app-rot', 2_000_000_000_000);
      const row = (await apps.find('app-rot'))!;
      expect(row.signingSecret).toMatch(/^enc:v1:/);
      expect(row.previousSigningSecret).toMatch(/^enc:v1:/);
      expect(row.previousSecretUntil).toBe(2_000_000_000_000);
      expect(JSON.stringify(row)).not.toContain(s1.slice(6));
      const def = await defs.definition(t.id);
      expect(def).toMatchObject({ signingSecret: s2, previousSecret: { secret: s1, until: 2_000_000_000_000 } });
      // A rotation without overlap drops the previous secret.
      const s3 = await sealedApps.rotateSecret('app-rot');
      expect(await defs.definition(t.id)).toMatchObject({ signingSecret: s3 });
      expect((await defs.definition(t.id))!.previousSecret).toBeUndefined();
    });

    it('seals plain-text secrets stored before a key was set, once', async () => {
      const t = await timers.create(newTimer('app-plain', 'p'));
      const plain = await apps.rotateSecret('app-plain');
      expect((await apps.find('app-plain'))!.signingSecret).toBe(plain);
      const cipher = new SecretCipher(Buffer.alloc(32, 6));
      const sealedApps = new AppRepository(db.dataSource, cipher);
      const before = (await apps.find('app-plain'))!.updatedAt;
      expect(await sealedApps.sealPlainSecrets()).toBeGreaterThanOrEqual(1);
      const row = (await apps.find('app-plain'))!;
      expect(row.signingSecret).toMatch(/^enc:v1:/);
      expect(row.updatedAt).toEqual(before);
      expect((await new TimerDefinitionRepository(db.dataSource, cipher).definition(t.id))!.signingSecret).toBe(plain);
      expect(await sealedApps.sealPlainSecrets()).toBe(0);
      expect(await apps.sealPlainSecrets()).toBe(0); // no key: nothing to do
    });
  });
});
