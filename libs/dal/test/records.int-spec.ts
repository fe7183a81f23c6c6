import { FireClaimRepository, FireOutcome, FireOutcomeRepository, RecordsFilter, TASK_ATTEMPTS_KEPT, TaskRepository, TaskStatus, TimerRepository } from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

jest.setTimeout(30_000);

// Fire records against a real MariaDB: the attempts history the executor's outcome UPDATE appends,
// and the records query (app-wide, one timer, one fire; time range, status, future pending left out).
describe('fire records (attempts, records query) against a real MariaDB', () => {
  let db: FreshDatabase;
  let claims: FireClaimRepository;
  let outcomes: FireOutcomeRepository;
  let tasks: TaskRepository;
  let timers: TimerRepository;
  const NOW = 1_900_000_000_000;
  const LEASE = 60_000;

  beforeAll(async () => {
    db = await freshDatabase();
    claims = new FireClaimRepository(db.dataSource);
    outcomes = new FireOutcomeRepository(db.dataSource);
    tasks = new TaskRepository(db.dataSource);
    timers = new TimerRepository(db.dataSource);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const newTimer = async (app: string, name: string) =>
    (await timers.create({ app, name, cron: '* * * * * *', notifyHttpParam: { url: 'https://example.com', method: 'POST' } })).id;
  const outcome = (timerId: string, runAt: number, token: string, attempt: number, patch: Partial<FireOutcome> = {}): FireOutcome => ({
    timerId,
    runAt,
    token,
    attempt,
    status: TaskStatus.Succeeded,
    httpStatus: 200,
    costMs: 12,
    latenessMs: 3,
    error: null,
    output: 'ok',
    claimedBy: token,
    claimedUntil: null,
    startedAt: runAt + 3,
    ...patch,
  });
  const claim = (timerId: string, runAt: number, attempt: number, token: string, nowMs = NOW) => claims.claim({ timerId, runAt, attempt, token, nowMs, leaseMs: LEASE });

  describe('attempts', () => {
    let timerId: string;
    beforeAll(async () => {
      timerId = await newTimer('att', 'attempts');
    });

    it('appends each attempt in the outcome UPDATE: a retried failure then a success', async () => {
      const runAt = NOW;
      await tasks.insertIgnore([{ app: 'att', timerId, runAt }]);
      expect(await claim(timerId, runAt, 1, 'A')).toBe(true);
      const retryAt = NOW + 2_000;
      const failed = { status: TaskStatus.Running, httpStatus: null, costMs: 1_001, error: 'no answer within 1000 ms', output: null, claimedBy: null, claimedUntil: retryAt + LEASE };
      expect(await outcomes.recordOutcomes([outcome(timerId, runAt, 'A', 1, failed)])).toEqual([true]);
      expect(await claim(timerId, runAt, 2, 'B', retryAt)).toBe(true);
      expect(await outcomes.recordOutcomes([outcome(timerId, runAt, 'B', 2, { startedAt: retryAt + 5, httpStatus: 204, costMs: 7 })])).toEqual([true]);
      const row = await tasks.find(timerId, runAt);
      expect(row).toMatchObject({ status: TaskStatus.Succeeded, attempt: 2, httpStatus: 204, error: null });
      expect(row!.attempts).toEqual([
        { attempt: 1, startedAt: runAt + 3, httpStatus: null, costMs: 1_001, error: 'no answer within 1000 ms' },
        { attempt: 2, startedAt: retryAt + 5, httpStatus: 204, costMs: 7, error: null },
      ]);
    });

    it('appends nothing for a fire recorded without a call (missed) or a write the claim fenced off', async () => {
      const missed = NOW + 1_000;
      const fenced = NOW + 2_000;
      await tasks.insertIgnore([missed, fenced].map((runAt) => ({ app: 'att', timerId, runAt })));
      expect(await claim(timerId, missed, 1, 'M')).toBe(true);
      expect(await claim(timerId, fenced, 1, 'F')).toBe(true);
      const applied = await outcomes.recordOutcomes([
        outcome(timerId, missed, 'M', 1, { status: TaskStatus.Missed, httpStatus: null, costMs: null, error: 'timer disabled', startedAt: null }),
        outcome(timerId, fenced, 'stale-token', 1),
      ]);
      expect(applied).toEqual([true, false]);
      expect((await tasks.find(timerId, missed))!.attempts).toBeNull();
      expect((await tasks.find(timerId, fenced))!.attempts).toBeNull();
    });

    it(`keeps the latest ${TASK_ATTEMPTS_KEPT} attempts and cuts each error to 256 characters`, async () => {
      const runAt = NOW + 3_000;
      await tasks.insertIgnore([{ app: 'att', timerId, runAt }]);
      const full = Array.from({ length: TASK_ATTEMPTS_KEPT }, (_, i) => ({ attempt: i + 1, startedAt: i, httpStatus: 500, costMs: 1, error: 'HTTP 500' }));
      await db.dataSource.query('UPDATE tasks SET attempts = ? WHERE timer_id = ? AND run_at = ?', [JSON.stringify(full), timerId, runAt]);
      expect(await claim(timerId, runAt, 1, 'C')).toBe(true);
      expect(await outcomes.recordOutcomes([outcome(timerId, runAt, 'C', 1, { status: TaskStatus.Failed, httpStatus: 500, error: 'x'.repeat(2_000) })])).toEqual([true]);
      const attempts = (await tasks.find(timerId, runAt))!.attempts!;
      expect(attempts).toHaveLength(TASK_ATTEMPTS_KEPT);
      expect(attempts[0].startedAt).toBe(1);
      expect(attempts[TASK_ATTEMPTS_KEPT - 1]).toEqual({ attempt: 1, startedAt: runAt + 3, httpStatus: 500, costMs: 12, error: 'x'.repeat(256) });
    });
  });

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

    it("reads an app's page through idx_app_run_at in index order (no sort of the range); a timer's through uk_timer_run_at", async () => {
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
        expect({ over, ...(await plan(all(over))) }).toEqual({ over, key: 'idx_app_run_at', filesort: false });
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
