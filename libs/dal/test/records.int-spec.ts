import { RecordsFilter, TaskRepository, TaskStatus, TimerRepository } from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

jest.setTimeout(30_000);

// The records query against a real MariaDB: app-wide, one timer (deleted too), one fire; time range,
// status, future pending fires left out unless asked; the index each reads. (The attempts history the
// outcome UPDATE appends: fire.repository.int-spec.ts.)
describe('fire records query against a real MariaDB', () => {
  let db: FreshDatabase;
  let tasks: TaskRepository;
  let timers: TimerRepository;

  beforeAll(async () => {
    db = await freshDatabase();
    tasks = new TaskRepository(db.dataSource);
    timers = new TimerRepository(db.dataSource);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const newTimer = async (app: string, name: string) =>
    (await timers.create({ app, name, cron: '* * * * * *', notifyHttpParam: { url: 'https://example.com', method: 'POST' } })).id;

  describe('records', () => {
    const app = 'rec';
    const T = 2_000_000_000_000;
    let a: string;
    let b: string;
    let other: string;
    const all = (over: Partial<RecordsFilter> = {}): RecordsFilter => ({ app, includePending: false, nowMs: T, ...over });
    const page = { page: 1, size: 100 };
    const fires = async (f: RecordsFilter, p = page) => (await tasks.records(f, p)).items.map((k) => `${k.timerId === a ? 'a' : 'b'}@${(k.runAt - T) / 1000}:${k.status}`);

    beforeAll(async () => {
      a = await newTimer(app, 'a');
      b = await newTimer(app, 'b');
      other = await newTimer('rec-other', 'x');
      // a: -3 s succeeded, -2 s failed, -1 s missed, +0 pending (due now), +5 s pending (future); b: -2 s succeeded, +5 s pending.
      await tasks.insertIgnore([-3, -2, -1, 0, 5].map((s) => ({ app, timerId: a, runAt: T + s * 1000 })));
      await tasks.insertIgnore([-2, 5].map((s) => ({ app, timerId: b, runAt: T + s * 1000 })));
      await tasks.insertIgnore([{ app: 'rec-other', timerId: other, runAt: T - 2_000 }]);
      const set = (timerId: string, s: number, status: number) => db.dataSource.query('UPDATE tasks SET status = ? WHERE timer_id = ? AND run_at = ?', [status, timerId, T + s * 1000]);
      await set(a, -3, TaskStatus.Succeeded);
      await set(a, -2, TaskStatus.Failed);
      await set(a, -1, TaskStatus.Missed);
      await set(b, -2, TaskStatus.Succeeded);
    });

    it("lists an app's fires latest first, leaving future pending fires out unless asked", async () => {
      expect(await fires(all())).toEqual(['a@0:0', 'a@-1:4', 'a@-2:3', 'b@-2:2', 'a@-3:2']);
      expect(await fires(all({ includePending: true }))).toEqual(['b@5:0', 'a@5:0', 'a@0:0', 'a@-1:4', 'a@-2:3', 'b@-2:2', 'a@-3:2']);
      expect((await tasks.records(all(), { page: 2, size: 2 })).total).toBe(5);
      expect(await fires(all(), { page: 2, size: 2 })).toEqual(['a@-2:3', 'b@-2:2']);
    });

    it('filters by status, by a time range [from, to), by timer and by fire', async () => {
      expect(await fires(all({ status: TaskStatus.Failed }))).toEqual(['a@-2:3']);
      expect(await fires(all({ fromMs: T - 2_000, toMs: T }))).toEqual(['a@-1:4', 'a@-2:3', 'b@-2:2']);
      expect(await fires(all({ fromMs: T - 2_000, toMs: T, status: TaskStatus.Succeeded }))).toEqual(['b@-2:2']);
      expect(await fires(all({ timerId: b, includePending: true }))).toEqual(['b@5:0', 'b@-2:2']);
      expect(await fires(all({ timerId: a, runAt: T + 5_000, includePending: true }))).toEqual(['a@5:0']);
      // Another app's timer or fire is not among this app's records.
      expect(await fires(all({ timerId: other }))).toEqual([]);
      expect(await tasks.records(all({ timerId: 'nope' }), page)).toEqual({ items: [], total: 0 });
    });

    it("reads an app's page through idx_app_run_at_outcome in index order (no sort of the range); a timer's through uk_timer_run_at", async () => {
      // A table of some size (other apps' fires), as the optimizer would see in production: on a handful
      // of rows a table scan costs less than any index.
      const bulk = await newTimer('rec-bulk', 'bulk');
      await tasks.insertIgnore(Array.from({ length: 5_000 }, (_, i) => ({ app: 'rec-bulk', timerId: bulk, runAt: T - 50_000_000 + i * 10_000 })));
      await db.dataSource.query('ANALYZE TABLE tasks');
      const plan = async (f: RecordsFilter) => {
        const [sql, params] = tasks.recordsQuery(f).limit(10).getQueryAndParameters();
        const [row] = (await db.dataSource.query(`EXPLAIN ${sql}`, params)) as { key: string | null; Extra: string | null }[];
        return { key: row.key, filesort: /filesort/i.test(row.Extra ?? '') };
      };
      for (const over of [{}, { status: TaskStatus.Failed }, { fromMs: T - 60_000, toMs: T, status: TaskStatus.Succeeded }, { includePending: true }]) {
        expect({ over, ...(await plan(all(over))) }).toEqual({ over, key: 'idx_app_run_at_outcome', filesort: false });
      }
      expect(await plan(all({ timerId: a, fromMs: T - 60_000 }))).toEqual({ key: 'uk_timer_run_at', filesort: false });
    });

    it('knows a deleted timer existed (its records stay readable), and not one of another app', async () => {
      await timers.softDelete(app, b);
      expect(await timers.existed(app, b)).toBe(true);
      expect(await timers.existed(app, other)).toBe(false);
      expect(await timers.existed(app, '999999999')).toBe(false);
      expect(await fires(all({ timerId: b }))).toEqual(['b@-2:2']);
    });
  });
});
