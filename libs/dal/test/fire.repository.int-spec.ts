import {
  AppRepository,
  ATTEMPT_ERROR_MAX,
  FireClaimRepository,
  FireOutcome,
  FireOutcomeRepository,
  OUTCOME_RESPONSE_CHARS,
  TASK_ATTEMPTS_KEPT,
  TaskRepository,
  TimerDefinitionRepository,
  TaskStatus,
  TimerRepository,
  TimerStatus,
  TASK_ERROR_MAX,
  TASK_OUTPUT_MAX,
} from '../src';
import { FreshDatabase, freshDatabase } from './fresh-database';

jest.setTimeout(30_000);

describe('the fire repositories (claims, outcomes, definitions) against a real MariaDB', () => {
  let db: FreshDatabase;
  let claims: FireClaimRepository;
  let outcomes: FireOutcomeRepository;
  let definitions: TimerDefinitionRepository;
  let tasks: TaskRepository;
  let timers: TimerRepository;
  let timerId: string;
  const NOW = 1_900_000_000_000;
  const LEASE = 60_000;
  let nextRunAt = NOW;

  beforeAll(async () => {
    db = await freshDatabase();
    claims = new FireClaimRepository(db.dataSource);
    outcomes = new FireOutcomeRepository(db.dataSource);
    definitions = new TimerDefinitionRepository(db.dataSource);
    tasks = new TaskRepository(db.dataSource);
    timers = new TimerRepository(db.dataSource);
    const t = await timers.create({ app: 'a', name: 'n', cron: '* * * * * *', notifyHttpParam: { url: 'https://example.com', method: 'POST' }, status: TimerStatus.Enabled });
    timerId = t.id;
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function fire(): Promise<number> {
    const runAt = (nextRunAt += 1_000);
    await tasks.insertIgnore([{ app: 'a', timerId, runAt }]);
    return runAt;
  }
  const claim = (runAt: number, attempt: number, token: string, nowMs = NOW) => claims.claim({ timerId, runAt, attempt, token, nowMs, leaseMs: LEASE });
  const outcome = (runAt: number, token: string, attempt: number, patch: Partial<FireOutcome> = {}): FireOutcome => ({
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
    ...patch,
  });

  describe('claim', () => {
    it('takes a pending fire once: a second claim of the same attempt is refused while the lease runs', async () => {
      const runAt = await fire();
      expect(await claim(runAt, 1, 'A')).toBe(true);
      expect(await claims.state({ timerId, runAt })).toEqual({ status: TaskStatus.Running, attempt: 1, claimedBy: 'A', claimedUntil: NOW + LEASE });
      expect(await claim(runAt, 1, 'B', NOW + LEASE - 1)).toBe(false);
    });

    it('lets exactly one of many concurrent claims win', async () => {
      const runAt = await fire();
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(runAt, 1, `C${i}`)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('hands a fire whose lease expired to the redelivery of the same attempt', async () => {
      const runAt = await fire();
      expect(await claim(runAt, 1, 'A')).toBe(true);
      expect(await claim(runAt, 1, 'B', NOW + LEASE + 1)).toBe(true);
      expect((await claims.state({ timerId, runAt }))?.claimedBy).toBe('B');
    });

    it('refuses settled fires and attempts that are not the next one', async () => {
      const runAt = await fire();
      expect(await claim(runAt, 2, 'A')).toBe(false); // pending attempt 0: only attempt 1 may take it
      expect(await claim(runAt, 1, 'A')).toBe(true);
      expect(await outcomes.recordOutcomes([outcome(runAt, 'A', 1)])).toEqual([true]);
      expect(await claim(runAt, 1, 'B', NOW + 10 * LEASE)).toBe(false);
      expect(await claim(runAt, 2, 'B', NOW + 10 * LEASE)).toBe(false);
    });

    it('gives a fire waiting for its retry to the next attempt only, before the retry lease ends', async () => {
      const runAt = await fire();
      expect(await claim(runAt, 1, 'A')).toBe(true);
      const retryAt = NOW + 1_000;
      expect(await outcomes.recordOutcomes([outcome(runAt, 'A', 1, { status: TaskStatus.Running, httpStatus: 500, claimedBy: null, claimedUntil: retryAt + LEASE })])).toEqual([true]);
      expect(await claim(runAt, 1, 'dup', retryAt)).toBe(false);
      expect(await claim(runAt, 3, 'far', retryAt)).toBe(false);
      expect(await claim(runAt, 2, 'B', retryAt)).toBe(true);
      expect(await claims.state({ timerId, runAt })).toMatchObject({ status: TaskStatus.Running, attempt: 2, claimedBy: 'B' });
    });

    it('is false for a fire without a row and for invalid ids', async () => {
      expect(await claim(NOW - 1, 1, 'A')).toBe(false);
      expect(await claims.claim({ timerId: '12abc', runAt: NOW, attempt: 1, token: 'A', nowMs: NOW, leaseMs: LEASE })).toBe(false);
      expect(await claims.state({ timerId, runAt: NOW - 1 })).toBeNull();
    });
  });

  describe('claimMany', () => {
    const req = (runAt: number, token: string, attempt = 1, nowMs = NOW) => ({ timerId, runAt, attempt, token, nowMs, leaseMs: LEASE });

    it('takes every free fire of a batch in one statement, in the order asked', async () => {
      const runAts: number[] = [];
      for (let i = 0; i < 600; i++) runAts.push(await fire()); // more than one statement's 500 rows
      const shuffled = [...runAts].reverse();
      const results = await claims.claimMany(shuffled.map((r) => req(r, `T${r}`)));
      expect(results.every((r) => r.claimed)).toBe(true);
      for (const r of [runAts[0], runAts[599]]) expect((await claims.state({ timerId, runAt: r }))?.claimedBy).toBe(`T${r}`);
    });

    it('reports refused claims with the state found, and lets one of two claims of a fire in one batch win', async () => {
      const free = await fire();
      const held = await fire();
      const twice = await fire();
      expect(await claim(held, 1, 'other')).toBe(true);
      const results = await claims.claimMany([req(free, 'A'), req(held, 'B'), req(twice, 'C1'), req(twice, 'C2'), req(NOW - 5, 'D'), { ...req(free, 'E'), timerId: 'x' }]);
      expect(results[0]).toEqual({ claimed: true });
      expect(results[1]).toEqual({ claimed: false, state: { status: TaskStatus.Running, attempt: 1, claimedBy: 'other', claimedUntil: NOW + LEASE } });
      const winners = [results[2], results[3]].filter((r) => r.claimed);
      expect(winners).toHaveLength(1);
      const winner = results[2].claimed ? 'C1' : 'C2';
      expect((await claims.state({ timerId, runAt: twice }))?.claimedBy).toBe(winner);
      expect([results[2], results[3]].find((r) => !r.claimed)).toEqual({ claimed: false, state: { status: TaskStatus.Running, attempt: 1, claimedBy: winner, claimedUntil: NOW + LEASE } });
      expect(results[4]).toEqual({ claimed: false, state: null });
      expect(results[5]).toEqual({ claimed: false, state: null });
    });

    it('does not deadlock when concurrent batches claim overlapping fires in opposite orders', async () => {
      const runAts: number[] = [];
      for (let i = 0; i < 200; i++) runAts.push(await fire());
      const batches = Array.from({ length: 6 }, (_, b) => (b % 2 ? [...runAts].reverse() : runAts).map((r) => req(r, `B${b}-${r}`)));
      const results = await Promise.all(batches.map((batch) => claims.claimMany(batch)));
      // Each fire is taken by exactly one batch.
      for (let i = 0; i < runAts.length; i++) {
        const idx = (b: number) => (b % 2 ? runAts.length - 1 - i : i);
        expect(results.filter((r, b) => r[idx(b)].claimed)).toHaveLength(1);
      }
    });
  });

  describe('stateMany', () => {
    it('reads many fires\' states in the order asked, without taking them; null for no row and for invalid ids', async () => {
      const settled = await fire();
      const open = await fire();
      expect(await claim(settled, 1, 'A')).toBe(true);
      expect(await outcomes.recordOutcomes([outcome(settled, 'A', 1)])).toEqual([true]);
      const states = await claims.stateMany([{ timerId, runAt: open }, { timerId, runAt: NOW - 1 }, { timerId: 'x1', runAt: open }, { timerId, runAt: settled }]);
      expect(states).toEqual([{ status: TaskStatus.Pending, attempt: 0, claimedBy: null, claimedUntil: null }, null, null, expect.objectContaining({ status: TaskStatus.Succeeded, attempt: 1 })]);
      expect(await claim(open, 1, 'B')).toBe(true);
    });
  });

  describe('changesSince', () => {
    it('lists the timers and apps changed since the watermark, by the database clock', async () => {
      const other = await timers.create({ app: 'b', name: 'quiet', cron: '* * * * * *', notifyHttpParam: { url: 'https://example.com', method: 'POST' }, status: TimerStatus.Enabled });
      const first = await definitions.changesSince(null, 100);
      expect(first).toEqual({ watermark: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+$/), timerIds: [], apps: [] });
      // Move the quiet timer's updated_at out of the look-back, as if it changed long ago.
      await db.dataSource.query('UPDATE timers SET updated_at = NOW(3) - INTERVAL 1 HOUR WHERE id = ?', [other.id]);
      await db.dataSource.query('UPDATE apps SET updated_at = NOW(3) - INTERVAL 1 HOUR');
      expect(await timers.setStatus('a', timerId, TimerStatus.Disabled)).toBe(true);
      await new AppRepository(db.dataSource).rotateSecret('a');
      const next = await definitions.changesSince(first.watermark, 100);
      expect(next.timerIds).toContain(timerId);
      expect(next.timerIds).not.toContain(other.id);
      expect(next.apps).toEqual(['a']);
      expect(await definitions.changesSince(first.watermark, 0)).toMatchObject({ timerIds: null });
      await timers.setStatus('a', timerId, TimerStatus.Enabled);
    });
  });

  describe('recordOutcomes', () => {
    it('writes a batch in one statement and reports each row applied', async () => {
      const runAts = await Promise.all([fire(), fire(), fire()]);
      for (const r of runAts) expect(await claim(r, 1, `T${r}`)).toBe(true);
      const applied = await outcomes.recordOutcomes(runAts.map((r, i) => outcome(r, `T${r}`, 1, { status: i === 2 ? TaskStatus.Missed : TaskStatus.Succeeded })));
      expect(applied).toEqual([true, true, true]);
      const row = await tasks.find(timerId, runAts[0]);
      expect(row).toMatchObject({ status: TaskStatus.Succeeded, httpStatus: 200, costMs: 12, latenessMs: 3, output: 'ok', claimedBy: `T${runAts[0]}`, claimedUntil: null });
      expect((await tasks.find(timerId, runAts[2]))?.status).toBe(TaskStatus.Missed);
    });

    it('skips, and reports, rows whose claim another executor took meanwhile (fencing)', async () => {
      const [a, b] = [await fire(), await fire()];
      expect(await claim(a, 1, 'old')).toBe(true);
      expect(await claim(b, 1, 'mine')).toBe(true);
      expect(await claim(a, 1, 'new', NOW + LEASE + 1)).toBe(true); // old's lease expired; new took it
      expect(await outcomes.recordOutcomes([outcome(a, 'old', 1), outcome(b, 'mine', 1)])).toEqual([false, true]);
      expect(await claims.state({ timerId, runAt: a })).toMatchObject({ status: TaskStatus.Running, claimedBy: 'new' });
    });

    it('writes a first attempt claimed outside MySQL only while its row is still pending, setting the attempt: the first of two such writes wins', async () => {
      const [a, b, c] = [await fire(), await fire(), await fire()];
      expect(await claim(c, 1, 'mysql-claim')).toBe(true);
      const first = { firstClaim: true, startedAt: NOW };
      expect(await outcomes.recordOutcomes([outcome(a, 'r1', 1, first), outcome(b, 'r2', 1, { ...first, status: TaskStatus.Running, claimedBy: null, claimedUntil: NOW + LEASE }), outcome(c, 'r3', 1, first)])).toEqual([true, true, false]);
      expect(await tasks.find(timerId, a)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1, claimedBy: 'r1', startedAt: NOW });
      expect(await claims.state({ timerId, runAt: b })).toEqual({ status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: NOW + LEASE });
      expect(await claims.state({ timerId, runAt: c })).toMatchObject({ status: TaskStatus.Running, claimedBy: 'mysql-claim' });
      // A second delivery (its claim in Redis lost) finds the fire settled: refused, the first one's record stays.
      expect(await outcomes.recordOutcomes([outcome(a, 'r9', 1, { ...first, output: 'second' })])).toEqual([false]);
      expect(await tasks.find(timerId, a)).toMatchObject({ claimedBy: 'r1', output: 'ok' });
    });

    it('files the outcome of a first attempt whose row is gone as a new settled row, and never over a row that exists', async () => {
      const runAt = (nextRunAt += 1_000);
      expect(await outcomes.fileOutcome(outcome(runAt, 'r1', 1, { firstClaim: true, startedAt: runAt + 3 }), 'a')).toBe(true);
      expect(await tasks.find(timerId, runAt)).toMatchObject({ app: 'a', status: TaskStatus.Succeeded, attempt: 1, claimedBy: 'r1', startedAt: runAt + 3, output: 'ok' });
      expect(await outcomes.fileOutcome(outcome(runAt, 'r2', 1, { firstClaim: true, status: TaskStatus.Failed, startedAt: runAt + 5, error: 'HTTP 500' }), 'a')).toBe(false);
      const failed = (nextRunAt += 1_000);
      expect(await outcomes.fileOutcome(outcome(failed, 'r3', 1, { firstClaim: true, status: TaskStatus.Failed, httpStatus: 500, startedAt: failed + 5, error: 'HTTP 500' }), 'a')).toBe(true);
      expect((await tasks.find(timerId, failed))?.attempts).toEqual([{ attempt: 1, startedAt: failed + 5, httpStatus: 500, costMs: 12, error: 'HTTP 500' }]);
    });

    it('never fails on long text, multi-byte characters or out-of-range numbers', async () => {
      const runAt = await fire();
      expect(await claim(runAt, 1, 'L')).toBe(true);
      const applied = await outcomes.recordOutcomes([
        outcome(runAt, 'L', 1, { status: TaskStatus.Failed, error: 'é'.repeat(5_000), output: '😀'.repeat(5_000), latenessMs: 1e13, costMs: -1e12, httpStatus: 99_999 }),
      ]);
      expect(applied).toEqual([true]);
      const row = await tasks.find(timerId, runAt);
      expect(Buffer.byteLength(row!.error!, 'utf8')).toBeLessThanOrEqual(TASK_ERROR_MAX);
      expect(Buffer.byteLength(row!.output!, 'utf8')).toBeLessThanOrEqual(TASK_OUTPUT_MAX);
      expect(row!.error!.length).toBeGreaterThan(100);
      expect(row!.latenessMs).toBe(2_147_483_647);
      expect(row!.costMs).toBe(-2_147_483_648);
      expect(row!.httpStatus).toBe(32_767);
    });

    it('writes more than one statement of rows (chunks of 500)', async () => {
      const runAts: number[] = [];
      for (let i = 0; i < 510; i++) runAts.push((nextRunAt += 1_000));
      await tasks.insertIgnore(runAts.map((runAt) => ({ app: 'a', timerId, runAt })));
      await db.dataSource.query('UPDATE tasks SET status = 1, attempt = 1, claimed_by = CONCAT(\'K\', run_at), claimed_until = ? WHERE timer_id = ? AND run_at >= ?', [
        NOW + LEASE,
        timerId,
        runAts[0],
      ]);
      const applied = await outcomes.recordOutcomes(runAts.map((r) => outcome(r, `K${r}`, 1)));
      expect(applied.every(Boolean)).toBe(true);
      const [{ n }] = (await db.dataSource.query('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ? AND run_at >= ? AND status = 2', [timerId, runAts[0]])) as { n: string }[];
      expect(Number(n)).toBe(510);
    });
    describe('attempts', () => {
      it('appends each attempt in the outcome UPDATE: a retried failure then a success', async () => {
        const runAt = await fire();
        expect(await claim(runAt, 1, 'A')).toBe(true);
        const retryAt = NOW + 2_000;
        const failed = { status: TaskStatus.Running, httpStatus: null, costMs: 1_001, error: 'no answer within 1000 ms', output: null, claimedBy: null, claimedUntil: retryAt + LEASE };
        expect(await outcomes.recordOutcomes([outcome(runAt, 'A', 1, { ...failed, startedAt: runAt + 3 })])).toEqual([true]);
        expect(await claim(runAt, 2, 'B', retryAt)).toBe(true);
        expect(await outcomes.recordOutcomes([outcome(runAt, 'B', 2, { startedAt: retryAt + 5, httpStatus: 204, costMs: 7 })])).toEqual([true]);
        const row = await tasks.find(timerId, runAt);
        expect(row).toMatchObject({ status: TaskStatus.Succeeded, attempt: 2, httpStatus: 204, error: null });
        expect(row!.attempts).toEqual([
          { attempt: 1, startedAt: runAt + 3, httpStatus: null, costMs: 1_001, error: 'no answer within 1000 ms' },
          { attempt: 2, startedAt: retryAt + 5, httpStatus: 204, costMs: 7, error: null },
        ]);
      });

      it('leaves attempts NULL on a first success and reads it back as the appended JSON would; a history already there is appended to', async () => {
        const [first, old, replayed] = [await fire(), await fire(), await fire()];
        const entry = (runAt: number, error: string | null) => ({ attempt: 1, startedAt: runAt + 3, httpStatus: 200, costMs: 12, error });
        // A row written before started_at existed: its success appended the JSON, read as it is.
        await db.dataSource.query('UPDATE tasks SET status = 2, attempt = 1, http_status = 200, cost_ms = 12, attempts = ? WHERE timer_id = ? AND run_at = ?', [JSON.stringify([entry(old, null)]), timerId, old]);
        // A replayed dead letter keeps its history: its first attempt's success appends.
        const history = [{ attempt: 1, startedAt: replayed - 9, httpStatus: 500, costMs: 4, error: 'HTTP 500' }];
        await db.dataSource.query('UPDATE tasks SET attempts = ? WHERE timer_id = ? AND run_at = ?', [JSON.stringify(history), timerId, replayed]);
        for (const r of [first, replayed]) expect(await claim(r, 1, `S${r}`)).toBe(true);
        const long = 'é'.repeat(ATTEMPT_ERROR_MAX + 10);
        expect(await outcomes.recordOutcomes([outcome(first, `S${first}`, 1, { startedAt: first + 3, error: long }), outcome(replayed, `S${replayed}`, 1, { startedAt: replayed + 3 })])).toEqual([true, true]);
        const [raw] = (await db.dataSource.query('SELECT attempts, started_at FROM tasks WHERE timer_id = ? AND run_at = ?', [timerId, first])) as { attempts: unknown; started_at: string | number }[];
        expect(raw.attempts).toBeNull();
        expect(Number(raw.started_at)).toBe(first + 3);
        expect((await tasks.find(timerId, first))!.attempts).toEqual([entry(first, 'é'.repeat(ATTEMPT_ERROR_MAX))]);
        expect((await tasks.find(timerId, old))!.attempts).toEqual([entry(old, null)]);
        expect((await tasks.find(timerId, replayed))!.attempts).toEqual([...history, entry(replayed, null)]);
        const [listed] = (await tasks.records({ app: 'a', timerId, runAt: first, includePending: true, nowMs: NOW }, { page: 1, size: 1 })).items;
        expect(listed.attempts).toEqual([entry(first, 'é'.repeat(ATTEMPT_ERROR_MAX))]);
      });

      it('appends nothing for a fire recorded without a call (missed) or a write the claim fenced off', async () => {
        const [missed, fenced] = [await fire(), await fire()];
        expect(await claim(missed, 1, 'M')).toBe(true);
        expect(await claim(fenced, 1, 'F')).toBe(true);
        const applied = await outcomes.recordOutcomes([
          outcome(missed, 'M', 1, { status: TaskStatus.Missed, httpStatus: null, costMs: null, error: 'timer disabled', startedAt: null }),
          outcome(fenced, 'stale-token', 1, { startedAt: fenced }),
        ]);
        expect(applied).toEqual([true, false]);
        expect((await tasks.find(timerId, missed))!.attempts).toBeNull();
        expect((await tasks.find(timerId, fenced))!.attempts).toBeNull();
      });

      it("keeps each attempt's answer in its entry (a first success too), and splits a batch of large answers across statements", async () => {
        const runAt = await fire();
        expect(await claim(runAt, 1, 'R')).toBe(true);
        const retryAt = NOW + 2_000;
        const busy = { status: 503, headers: { 'retry-after': '1' }, body: '\u0000\uFFFD "quoted"', truncated: false };
        const failed = { status: TaskStatus.Running, httpStatus: 503, error: 'HTTP 503', claimedBy: null, claimedUntil: retryAt + LEASE, startedAt: runAt + 3, response: busy };
        expect(await outcomes.recordOutcomes([outcome(runAt, 'R', 1, failed)])).toEqual([true]);
        expect(await claim(runAt, 2, 'R2', retryAt)).toBe(true);
        const done = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}', truncated: true };
        expect(await outcomes.recordOutcomes([outcome(runAt, 'R2', 2, { startedAt: retryAt + 5, response: done })])).toEqual([true]);
        expect((await tasks.find(timerId, runAt))!.attempts!.map((a) => [a.attempt, a.response])).toEqual([
          [1, busy],
          [2, done],
        ]);

        // 600 answers of 16 KiB (about 9.6 MiB of JSON): more than one statement's share (OUTCOME_RESPONSE_CHARS).
        const runAts: number[] = [];
        for (let i = 0; i < 600; i++) runAts.push((nextRunAt += 1_000));
        await tasks.insertIgnore(runAts.map((r) => ({ app: 'a', timerId, runAt: r })));
        await db.dataSource.query("UPDATE tasks SET status = 1, attempt = 1, claimed_by = CONCAT('L', run_at), claimed_until = ? WHERE timer_id = ? AND run_at >= ?", [NOW + LEASE, timerId, runAts[0]]);
        const big = { status: 200, headers: {}, body: 'b'.repeat(16_384), truncated: true };
        expect(OUTCOME_RESPONSE_CHARS).toBeLessThan(600 * 16_384);
        const query = jest.spyOn(db.dataSource, 'query');
        const applied = await outcomes.recordOutcomes(runAts.map((r) => outcome(r, `L${r}`, 1, { startedAt: r + 1, response: big })));
        const updates = query.mock.calls.filter(([sql]) => sql.startsWith('UPDATE')).length;
        query.mockRestore();
        expect(applied.every(Boolean)).toBe(true);
        expect(updates).toBe(3);
        expect((await tasks.find(timerId, runAts[599]))!.attempts![0].response).toEqual(big);
      });

      it(`keeps the latest ${TASK_ATTEMPTS_KEPT} attempts and cuts each error to ${ATTEMPT_ERROR_MAX} characters`, async () => {
        const runAt = await fire();
        const full = Array.from({ length: TASK_ATTEMPTS_KEPT }, (_, i) => ({ attempt: i + 1, startedAt: i, httpStatus: 500, costMs: 1, error: 'HTTP 500' }));
        await db.dataSource.query('UPDATE tasks SET attempts = ? WHERE timer_id = ? AND run_at = ?', [JSON.stringify(full), timerId, runAt]);
        expect(await claim(runAt, 1, 'C')).toBe(true);
        expect(await outcomes.recordOutcomes([outcome(runAt, 'C', 1, { status: TaskStatus.Failed, httpStatus: 500, error: 'x'.repeat(2_000), startedAt: runAt + 3 })])).toEqual([true]);
        const attempts = (await tasks.find(timerId, runAt))!.attempts!;
        expect(attempts).toHaveLength(TASK_ATTEMPTS_KEPT);
        expect(attempts[0].startedAt).toBe(1);
        expect(attempts[TASK_ATTEMPTS_KEPT - 1]).toEqual({ attempt: 1, startedAt: runAt + 3, httpStatus: 500, costMs: 12, error: 'x'.repeat(ATTEMPT_ERROR_MAX) });
      });
    });
  });

  describe('definitions', () => {
    it('reads a timer with its app secret, deleted ones included', async () => {
      const secret = await new AppRepository(db.dataSource).rotateSecret('a');
      const def = await definitions.definition(timerId);
      expect(def?.timer.id).toBe(timerId);
      expect(def?.signingSecret).toBe(secret);
      const gone = await timers.create({ app: 'nosecret', name: 'g', cron: '* * * * * *', notifyHttpParam: { url: 'https://example.com', method: 'GET' } });
      await timers.softDelete('nosecret', gone.id, undefined, NOW);
      const d2 = await definitions.definition(gone.id);
      expect(d2?.timer.deletedAt).toBe(NOW);
      expect(d2?.signingSecret).toBeNull();
      expect(await definitions.definition('999999')).toBeNull();
    });

    it('reads many timers by id in one query, with their secrets, skipping absent and invalid ids', async () => {
      const secret = await new AppRepository(db.dataSource).rotateSecret('a');
      const gone = await timers.create({ app: 'nosecret', name: 'g2', cron: '* * * * * *', notifyHttpParam: { url: 'https://example.com', method: 'GET' } });
      await timers.softDelete('nosecret', gone.id, undefined, NOW);
      const defs = await definitions.definitions([timerId, gone.id, '999999', 'x', timerId]);
      const byId = new Map(defs.map((d) => [d.timer.id, d]));
      expect([...byId.keys()].sort()).toEqual([timerId, gone.id].sort());
      expect(defs).toHaveLength(2);
      expect(byId.get(timerId)?.signingSecret).toBe(secret);
      expect(byId.get(gone.id)?.timer.deletedAt).toBe(NOW);
      expect(byId.get(gone.id)?.signingSecret).toBeNull();
      expect(await definitions.definitions([])).toEqual([]);
    });

    it('lists the timers with open fires due in a range, once each, from the open rows of the range alone', async () => {
      const other = await timers.create({ app: 'a', name: 'other', cron: '* * * * * *', notifyHttpParam: { url: 'https://example.com', method: 'GET' } });
      const base = 2_000_000_000_000;
      await tasks.insertIgnore([
        { app: 'a', timerId: other.id, runAt: base + 1 },
        { app: 'a', timerId: other.id, runAt: base + 2 },
        { app: 'a', timerId, runAt: base + 100_000 },
      ]);
      const defs = await definitions.definitionsDueBetween(base, base + 60_000, 100);
      expect(defs.map((d) => d.timer.id)).toEqual([other.id]);
      expect(defs[0].signingSecret).not.toBeNull();
      // The fires are read from the index alone, as a range of the open rows.
      const plan = (await db.dataSource.query(
        'EXPLAIN SELECT t.id FROM timers t WHERE t.id IN (SELECT k.timer_id FROM tasks k FORCE INDEX (idx_outcome_run_at) WHERE k.outcome = 0 AND k.run_at >= ? AND k.run_at < ?)',
        [base, base + 60_000],
      )) as { table: string; key: string | null; type: string; Extra: string | null }[];
      const fires = plan.find((r) => r.key === 'idx_outcome_run_at');
      expect({ type: fires?.type, indexOnly: (fires?.Extra ?? '').includes('Using index') }).toEqual({ type: 'range', indexOnly: true });
    });
  });
});
