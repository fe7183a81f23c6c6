/**
 * Where the claim's and the outcome's MariaDB CPU goes (issue 11), a scratch variant of bench:db
 * (a command, not a test; product code untouched):
 *
 *   npm run bench:db:outcomes -- [--timers 5000] [--seconds 10] [--reps 3] [--batch 250]
 *
 * Same meter and database as bench:db (fresh database, real migrations, 1 minute of finished fires
 * preloaded). Each variant gets its own `--seconds` of fires (timers x seconds), inserted and, for the
 * outcome variants, claimed through the real repositories unmeasured; then only the variant's
 * statements are measured (MariaDB CPU per fire, idle rate out, InnoDB deferred work included).
 *   claim:today        FireClaimRepository.claimMany (status 0 -> 1: moves no index entry since migration 1765070000000; token, lease)
 *   claim:no-status    the same join and fence, SET attempt, claimed_by, claimed_until only (no index move)
 *   claim:status-only  the same join, SET status only (the row grows by nothing; an index move before 1765070000000)
 *   outcome:a-today    FireOutcomeRepository.recordOutcomes as the executor calls it (output 'ok'; since
 *                      1765050000000 a first success writes started_at, no attempt JSON)
 *   outcome:b-narrow   the same join and fence, SET status, claimed_until only
 *   outcome:b2-fixed   b + http_status, cost_ms, lateness_ms (fixed-width numbers, no JSON, no output)
 *   outcome:c-no-output  recordOutcomes with output null (the attempt JSON, no output)
 *   outcome:d-in-list  b's columns as one single-table UPDATE ... WHERE (timer_id, run_at, claimed_by, attempt) IN (...)
 *   fixed:claim / fixed:outcome  the design where no update changes a record's size: the bench's own
 *                      database gets claim_token BIGINT NOT NULL DEFAULT 0 (started_at is the product's), and the rows'
 *                      claimed_until, http_status, cost_ms, lateness_ms are set to 0 after the insert
 *                      (unmeasured, as if inserted so); the claim writes status, attempt, claim_token,
 *                      claimed_until; the outcome, fenced on claim_token + attempt, status, the 3 numbers,
 *                      started_at, claimed_until = 0 (no JSON). --only-fixed 1 runs these with
 *                      claim:today and outcome:a-today only.
 *   claim:tvc / outcome:a-tvc    the repositories' statements with the batch as one SELECT (the first row, naming
 *                      the columns) UNION ALL one table value constructor `VALUES (...), (...)` for the rest
 *                      (MariaDB's syntax; MySQL 8 spells it `VALUES ROW(...)`), instead of a SELECT per row
 *   claim:json / outcome:a-json  the same with the batch as `JSON_TABLE(?, '$[*]' COLUMNS (...))`: one
 *                      parameter, typed columns (MariaDB 10.6+, MySQL 8)
 *                      --only-tvc 1 runs these four with claim:today and outcome:a-today only.
 *   outcome:first-claim FireOutcomeRepository.recordOutcomes of first attempts claimed in Redis (`firstClaim`):
 *                      the rows are still pending, no claim before it; the fire's only write
 *                      (TIMER_CLAIM_STORE=redis). --only-first 1 runs it with claim:today and outcome:a-today only.
 * Also per variant: index page splits (INNODB_METRICS index_page_splits, when readable), the pages the
 * clustered and secondary indexes gained (ANALYZE TABLE, information_schema.tables, outside the meter)
 * and the average bytes of the variable columns of its rows afterwards.
 * Run it alone on the server: every other client's work would count.
 */
import { DataSource } from 'typeorm';
import { ATTEMPT_ERROR_MAX, FireClaimRepository, FireClaimRequest, FireOutcome, FireOutcomeRepository, NewTask, TASK_ATTEMPTS_KEPT, TaskRepository, TaskStatus } from '@timer/dal';
import { markdownTable, numericFlags, shortId, writeResults } from '../../e2e/support';
import { COUNTERS, log, mariadbPid, Measure, median, Meter, withBenchDatabase } from './meter';

const DEFAULTS = { timers: 5000, seconds: 10, reps: 3, batch: 250, onlyFixed: 0, onlyTvc: 0, onlyFirst: 0 };
type Args = typeof DEFAULTS;
const APP = 'bench';
const NAMES = [...COUNTERS, 'Innodb_pages_written', 'Innodb_buffer_pool_pages_dirty', 'Innodb_data_written'];
const CLAIMS = ['claim:today', 'claim:no-status', 'claim:status-only'] as const;
const OUTCOMES = ['outcome:a-today', 'outcome:b-narrow', 'outcome:b2-fixed', 'outcome:c-no-output', 'outcome:d-in-list'] as const;

interface Row extends Measure {
  splits: number | null;
  /** New pages per 1,000 fires: clustered index, secondary indexes. */
  newPages: { data: number; index: number };
  bytes: Record<string, number>;
}

function firesOf(args: Args, startMs: number): NewTask[] {
  const rows: NewTask[] = [];
  for (let t = 1; t <= args.timers; t++) for (let s = 0; s < args.seconds; s++) rows.push({ app: APP, timerId: String(t), runAt: startMs + s * 1000 });
  return rows;
}

function dueOrder(args: Args, startMs: number): NewTask[] {
  const rows: NewTask[] = [];
  for (let s = 0; s < args.seconds; s++) for (let t = 1; t <= args.timers; t++) rows.push({ app: APP, timerId: String(t), runAt: startMs + s * 1000 });
  return rows;
}

function batches<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/** `(SELECT ? AS timer_id, ? AS run_at, ...) UNION ALL ...` as the repositories build it. */
function derived(rows: unknown[][], columns: string[]): { sql: string; params: unknown[] } {
  const first = ['CAST(? AS UNSIGNED) AS timer_id', '? AS run_at', ...columns.map((c) => `? AS ${c}`)].join(', ');
  const rest = ['CAST(? AS UNSIGNED)', '?', ...columns.map(() => '?')].join(', ');
  return { sql: `(${rows.map((_, i) => `SELECT ${i === 0 ? first : rest}`).join(' UNION ALL ')})`, params: rows.flat() };
}

/** {@link derived}'s rows as one SELECT (naming the columns) UNION ALL one table value constructor (MariaDB). */
function derivedTvc(rows: unknown[][], columns: string[]): { sql: string; params: unknown[] } {
  const first = ['CAST(? AS UNSIGNED) AS timer_id', '? AS run_at', ...columns.map((c) => `? AS ${c}`)].join(', ');
  const rest = `(${['CAST(? AS UNSIGNED)', '?', ...columns.map(() => '?')].join(', ')})`;
  const tail = rows.length > 1 ? ` UNION ALL VALUES ${rows.slice(1).map(() => rest).join(', ')}` : '';
  return { sql: `(SELECT ${first}${tail})`, params: rows.flat() };
}

/** {@link derived}'s rows as a JSON_TABLE of typed columns: one parameter, the rows as a JSON array of arrays. */
function derivedJson(rows: unknown[][], columns: [string, string][]): { sql: string; params: unknown[] } {
  const cols = [['timer_id', 'BIGINT UNSIGNED'], ['run_at', 'BIGINT'], ...columns].map(([c, t], i) => `${c} ${t} PATH '$[${i}]'`).join(', ');
  return { sql: `(SELECT * FROM JSON_TABLE(?, '$[*]' COLUMNS (${cols})) j)`, params: [JSON.stringify(rows)] };
}

/** Pages of the clustered index and of the secondary indexes (fresh statistics): a split allocates a page. */
async function pages(db: DataSource, schema: string): Promise<{ data: number; index: number }> {
  await db.query('ANALYZE TABLE tasks');
  const [r] = (await db.query(`SELECT data_length d, index_length i FROM information_schema.tables WHERE table_schema = ? AND table_name = 'tasks'`, [schema])) as { d: string; i: string }[];
  return { data: Number(r.d) / 16384, index: Number(r.i) / 16384 };
}

async function splits(db: DataSource): Promise<number | null> {
  try {
    // MariaDB's column is ENABLED (MySQL's STATUS); a disabled counter stays 0: no figure rather than a false one.
    const r = (await db.query(`SELECT count, enabled FROM information_schema.INNODB_METRICS WHERE name = 'index_page_splits'`)) as { count: string; enabled: string | number }[];
    return r[0] && Number(r[0].enabled) === 1 ? Number(r[0].count) : null;
  } catch {
    return null;
  }
}

/** Average bytes of the variable columns of the window's rows, and how many are non-null fixed columns. */
async function rowBytes(db: DataSource, startMs: number, seconds: number): Promise<Record<string, number>> {
  const [r] = (await db.query(
    `SELECT AVG(LENGTH(app)) app, AVG(COALESCE(LENGTH(claimed_by), 0)) claimed_by, AVG(COALESCE(LENGTH(attempts), 0)) attempts,
            AVG(COALESCE(LENGTH(output), 0)) output, AVG(COALESCE(LENGTH(error), 0)) error,
            AVG((http_status IS NOT NULL) * 2 + (cost_ms IS NOT NULL) * 4 + (lateness_ms IS NOT NULL) * 4 + (claimed_until IS NOT NULL) * 8) fixed_nullable
     FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ?`,
    [APP, startMs, startMs + seconds * 1000],
  )) as Record<string, string>[];
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]));
}

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  await withBenchDatabase('dbv', async (db, name) => {
    // The fixed-width design's token, on the bench's own database only, before any row (started_at is the
    // product's since migration 1765050000000).
    await db.query('ALTER TABLE tasks ADD COLUMN claim_token BIGINT NOT NULL DEFAULT 0');
    const meter = new Meter(mariadbPid(), db, NAMES);
    const tasks = new TaskRepository(db);
    const claims = new FireClaimRepository(db);
    const outcomes = new FireOutcomeRepository(db);
    const fmt = (await db.query(`SELECT row_format FROM information_schema.tables WHERE table_schema = ? AND table_name = 'tasks'`, [name])) as { row_format: string }[];
    log(`tasks row format: ${fmt[0]?.row_format}; page splits readable: ${(await splits(db)) !== null}`);

    const minute = 60_000;
    const start = Math.floor(Date.now() / minute) * minute + 10 * minute;
    await tasks.insertIgnore(firesOf({ ...args, seconds: 60 }, start + 24 * 60 * minute));
    await db.query('UPDATE tasks SET status = ?, attempt = 1, http_status = 200, claimed_by = ? WHERE status = ?', [TaskStatus.Succeeded, 'preload', TaskStatus.Pending]);
    await meter.calibrate();

    const executor = `exec-${shortId()}`;
    let seq = 0;
    let window = 0;
    const nextWindow = () => start + window++ * (args.seconds + 60) * 1000;
    const fires = args.timers * args.seconds;
    const results: Row[][] = [];

    const claimRequests = (startMs: number): FireClaimRequest[] =>
      dueOrder(args, startMs).map((f) => ({ timerId: f.timerId, runAt: f.runAt, attempt: 1, token: `${executor}:${seq++}`, nowMs: Date.now(), leaseMs: 30_000 }));
    const claimToday = async (reqs: FireClaimRequest[]) => {
      for (const b of batches(reqs, args.batch)) if (!(await claims.claimMany(b)).every((r) => r.claimed)) throw new Error('a claim was refused');
      return Math.ceil(reqs.length / args.batch);
    };
    const claimSql = async (reqs: FireClaimRequest[], set: string) => {
      for (const b of batches(reqs, args.batch)) {
        const v = derived(b.map((c) => [c.timerId, c.runAt, c.attempt, c.token, c.nowMs + c.leaseMs, c.nowMs]), ['attempt', 'token', 'claimed_until', 'now_ms']);
        await db.query(`UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at SET ${set} WHERE t.status = ${TaskStatus.Pending} AND t.attempt = v.attempt - 1`, v.params);
      }
      return Math.ceil(reqs.length / args.batch);
    };
    // The repository's claim and outcome statements (claimChunk, recordChunk) over another derived table.
    const claimWith = async (reqs: FireClaimRequest[], form: 'tvc' | 'json') => {
      for (const b of batches(reqs, args.batch)) {
        const sorted = [...b].sort((x, y) => Number(x.timerId) - Number(y.timerId) || x.runAt - y.runAt);
        const values = sorted.map((c) => [c.timerId, c.runAt, c.attempt, c.token, c.nowMs + c.leaseMs, c.nowMs]);
        const v = form === 'tvc' ? derivedTvc(values, ['attempt', 'token', 'claimed_until', 'now_ms']) : derivedJson(values, [['attempt', 'INT'], ['token', 'VARCHAR(128)'], ['claimed_until', 'BIGINT'], ['now_ms', 'BIGINT']]);
        const r = (await db.query(
          `UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at
           SET t.status = ${TaskStatus.Running}, t.attempt = v.attempt, t.claimed_by = v.token, t.claimed_until = v.claimed_until
           WHERE (t.status = ${TaskStatus.Pending} AND t.attempt = v.attempt - 1)
              OR (t.status = ${TaskStatus.Running} AND t.attempt = v.attempt - 1 AND (t.claimed_by IS NULL OR COALESCE(t.claimed_until, 0) < v.now_ms))
              OR (t.status = ${TaskStatus.Running} AND t.attempt = v.attempt AND COALESCE(t.claimed_until, 0) < v.now_ms)`,
          v.params,
        )) as { affectedRows: number };
        if (r.affectedRows < b.length) throw new Error(`claim (${form}) took ${r.affectedRows} of ${b.length}`);
      }
      return Math.ceil(reqs.length / args.batch);
    };
    const outcomeWith = async (reqs: FireClaimRequest[], form: 'tvc' | 'json') => {
      for (const b of batches(reqs, args.batch)) {
        const sorted = [...b].sort((x, y) => Number(x.timerId) - Number(y.timerId) || x.runAt - y.runAt);
        const values = sorted.map((c) => [c.timerId, c.runAt, c.token, 1, TaskStatus.Succeeded, 200, 3, 40, null, 'ok', c.token, null, c.runAt + 40]);
        const names = ['token', 'attempt', 'status', 'http_status', 'cost_ms', 'lateness_ms', 'error', 'output', 'claimed_by', 'claimed_until', 'started_at'];
        const types = ['VARCHAR(128)', 'INT', 'TINYINT', 'SMALLINT', 'INT', 'INT', 'VARCHAR(1024)', 'VARCHAR(4096)', 'VARCHAR(128)', 'BIGINT', 'BIGINT'];
        const v = form === 'tvc' ? derivedTvc(values, names) : derivedJson(values, names.map((n, i) => [n, types[i]]));
        const fixed = `v.status = ${TaskStatus.Succeeded} AND v.started_at IS NOT NULL AND t.attempts IS NULL`;
        const r = (await db.query(
          `UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at
           SET t.status = v.status, t.http_status = v.http_status, t.cost_ms = v.cost_ms, t.lateness_ms = v.lateness_ms,
               t.error = v.error, t.output = v.output, t.claimed_until = v.claimed_until, t.claimed_by = v.claimed_by,
               t.started_at = IF(${fixed}, v.started_at, t.started_at),
               t.attempts = IF(v.started_at IS NULL OR (${fixed}), t.attempts, JSON_ARRAY_APPEND(
                 IF(JSON_LENGTH(t.attempts) >= ${TASK_ATTEMPTS_KEPT}, JSON_REMOVE(t.attempts, '$[0]'), COALESCE(t.attempts, '[]')), '$',
                 JSON_OBJECT('attempt', v.attempt, 'startedAt', v.started_at, 'httpStatus', v.http_status, 'costMs', v.cost_ms,
                             'error', LEFT(v.error, ${ATTEMPT_ERROR_MAX}))))
           WHERE t.claimed_by = v.token AND t.attempt = v.attempt`,
          v.params,
        )) as { affectedRows: number };
        if (r.affectedRows < b.length) throw new Error(`outcome (${form}) wrote ${r.affectedRows} of ${b.length}`);
      }
      return Math.ceil(reqs.length / args.batch);
    };
    const outcomeOf = (c: FireClaimRequest, output: string | null, firstClaim = false): FireOutcome => ({
      timerId: c.timerId, runAt: c.runAt, token: c.token, attempt: 1, status: TaskStatus.Succeeded, httpStatus: 200, costMs: 3, latenessMs: 40,
      error: null, output, claimedBy: c.token, claimedUntil: null, startedAt: c.runAt + 40, firstClaim,
    });
    const outcomeRepo = async (reqs: FireClaimRequest[], output: string | null, firstClaim = false) => {
      for (const b of batches(reqs, args.batch)) if (!(await outcomes.recordOutcomes(b.map((c) => outcomeOf(c, output, firstClaim)))).every(Boolean)) throw new Error('an outcome was fenced off');
      return Math.ceil(reqs.length / args.batch);
    };
    const outcomeJoin = async (reqs: FireClaimRequest[], withNumbers: boolean) => {
      for (const b of batches(reqs, args.batch)) {
        const sorted = [...b].sort((x, y) => Number(x.timerId) - Number(y.timerId) || x.runAt - y.runAt);
        const v = derived(sorted.map((c) => [c.timerId, c.runAt, c.token, 1, TaskStatus.Succeeded, 200, 3, 40]), ['token', 'attempt', 'status', 'http_status', 'cost_ms', 'lateness_ms']);
        const numbers = withNumbers ? ', t.http_status = v.http_status, t.cost_ms = v.cost_ms, t.lateness_ms = v.lateness_ms' : '';
        const r = (await db.query(
          `UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at
           SET t.status = v.status, t.claimed_until = NULL${numbers} WHERE t.claimed_by = v.token AND t.attempt = v.attempt`,
          v.params,
        )) as { affectedRows: number };
        if (r.affectedRows < b.length) throw new Error(`outcome wrote ${r.affectedRows} of ${b.length}`);
      }
      return Math.ceil(reqs.length / args.batch);
    };
    const outcomeIn = async (reqs: FireClaimRequest[]) => {
      for (const b of batches(reqs, args.batch)) {
        const sorted = [...b].sort((x, y) => Number(x.timerId) - Number(y.timerId) || x.runAt - y.runAt);
        const r = (await db.query(
          `UPDATE tasks SET status = ${TaskStatus.Succeeded}, claimed_until = NULL WHERE (timer_id, run_at, claimed_by, attempt) IN (${sorted.map(() => '(?, ?, ?, 1)').join(', ')})`,
          sorted.flatMap((c) => [c.timerId, c.runAt, c.token]),
        )) as { affectedRows: number };
        if (r.affectedRows < b.length) throw new Error(`outcome wrote ${r.affectedRows} of ${b.length}`);
      }
      return Math.ceil(reqs.length / args.batch);
    };

    for (let rep = 1; rep <= args.reps; rep++) {
      const out: Row[] = [];
      const measured = async (kind: string, startMs: number, fn: () => Promise<number>) => {
        const p0 = await pages(db, name);
        const s0 = await splits(db);
        const m = await meter.measure(kind, fires, fn);
        const s1 = await splits(db);
        const p1 = await pages(db, name);
        const newPages = { data: ((p1.data - p0.data) * 1000) / fires, index: ((p1.index - p0.index) * 1000) / fires };
        out.push({ ...m, splits: s0 === null || s1 === null ? null : (s1 - s0) / fires, newPages, bytes: await rowBytes(db, startMs, args.seconds) });
      };
      const claimKinds: readonly string[] = args.onlyTvc ? ['claim:today', 'claim:tvc', 'claim:json'] : args.onlyFixed || args.onlyFirst ? ['claim:today'] : CLAIMS;
      const outcomeKinds: readonly string[] = args.onlyTvc
        ? ['outcome:a-today', 'outcome:a-tvc', 'outcome:a-json']
        : args.onlyFixed
          ? ['outcome:a-today']
          : args.onlyFirst
            ? ['outcome:a-today', 'outcome:first-claim']
            : [...OUTCOMES, 'outcome:first-claim'];
      for (const kind of claimKinds) {
        const w = nextWindow();
        await tasks.insertIgnore(firesOf(args, w));
        const reqs = claimRequests(w);
        if (rep === 1 && kind === 'claim:today') log(`pending row bytes: ${JSON.stringify(await rowBytes(db, w, args.seconds))}`);
        await measured(kind, w, () =>
          kind === 'claim:today'
            ? claimToday(reqs)
            : kind === 'claim:tvc' || kind === 'claim:json'
              ? claimWith(reqs, kind === 'claim:tvc' ? 'tvc' : 'json')
              : kind === 'claim:no-status'
                ? claimSql(reqs, 't.attempt = v.attempt, t.claimed_by = v.token, t.claimed_until = v.claimed_until')
                : claimSql(reqs, `t.status = ${TaskStatus.Running}`),
        );
      }
      for (const kind of outcomeKinds) {
        const w = nextWindow();
        await tasks.insertIgnore(firesOf(args, w));
        const reqs = claimRequests(w);
        if (kind !== 'outcome:first-claim') await claimToday(reqs);
        if (rep === 1 && kind === 'outcome:d-in-list') {
          const plan = await db.query(`EXPLAIN UPDATE tasks SET status = 2 WHERE (timer_id, run_at, claimed_by, attempt) IN ((?, ?, ?, 1), (?, ?, ?, 1))`, [reqs[0].timerId, reqs[0].runAt, reqs[0].token, reqs[1].timerId, reqs[1].runAt, reqs[1].token]);
          log(`d-in-list plan: ${JSON.stringify(plan)}`);
        }
        await measured(kind, w, () =>
          kind === 'outcome:a-today' || kind === 'outcome:first-claim'
            ? outcomeRepo(reqs, 'ok', kind === 'outcome:first-claim')
            : kind === 'outcome:a-tvc' || kind === 'outcome:a-json'
              ? outcomeWith(reqs, kind === 'outcome:a-tvc' ? 'tvc' : 'json')
              : kind === 'outcome:c-no-output'
                ? outcomeRepo(reqs, null)
                : kind === 'outcome:d-in-list'
                  ? outcomeIn(reqs)
                  : outcomeJoin(reqs, kind === 'outcome:b2-fixed'),
        );
        if (rep === 1) {
          // What the variant wrote, in the terms the repository's rows are read in (nulls stay NULL, not 0 or 'null').
          const [w1] = (await db.query(
            `SELECT COUNT(*) n, SUM(status = ${TaskStatus.Succeeded}) ok, SUM(claimed_until IS NULL) lease_null, SUM(error IS NULL) error_null, SUM(output = 'ok') output_ok, SUM(attempts IS NULL) no_json, SUM(started_at = run_at + 40) started
             FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ?`,
            [APP, w, w + args.seconds * 1000],
          )) as Record<string, string>[];
          log(`${kind} rows: ${JSON.stringify(w1)}`);
        }
      }
      if (!args.onlyTvc && !args.onlyFirst) {
        const w = nextWindow();
        await tasks.insertIgnore(firesOf(args, w));
        await db.query('UPDATE tasks SET claimed_until = 0, http_status = 0, cost_ms = 0, lateness_ms = 0 WHERE app = ? AND run_at >= ? AND run_at < ?', [APP, w, w + args.seconds * 1000]);
        const reqs = claimRequests(w);
        const tok = (c: FireClaimRequest) => Number(c.token.slice(c.token.lastIndexOf(':') + 1)) + 2 ** 40;
        await measured('fixed:claim', w, async () => {
          for (const b of batches(reqs, args.batch)) {
            const v = derived(b.map((c) => [c.timerId, c.runAt, c.attempt, tok(c), c.nowMs + c.leaseMs]), ['attempt', 'tok', 'claimed_until']);
            const r = (await db.query(
              `UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at
               SET t.status = ${TaskStatus.Running}, t.attempt = v.attempt, t.claim_token = v.tok, t.claimed_until = v.claimed_until
               WHERE t.status = ${TaskStatus.Pending} AND t.attempt = v.attempt - 1`,
              v.params,
            )) as { affectedRows: number };
            if (r.affectedRows < b.length) throw new Error(`claim took ${r.affectedRows} of ${b.length}`);
          }
          return Math.ceil(reqs.length / args.batch);
        });
        await measured('fixed:outcome', w, async () => {
          for (const b of batches(reqs, args.batch)) {
            const v = derived(b.map((c) => [c.timerId, c.runAt, tok(c), 1, TaskStatus.Succeeded, 200, 3, 40, c.runAt + 40]), ['tok', 'attempt', 'status', 'http_status', 'cost_ms', 'lateness_ms', 'started_at']);
            const r = (await db.query(
              `UPDATE ${v.sql} v STRAIGHT_JOIN tasks t ON t.timer_id = v.timer_id AND t.run_at = v.run_at
               SET t.status = v.status, t.http_status = v.http_status, t.cost_ms = v.cost_ms, t.lateness_ms = v.lateness_ms, t.started_at = v.started_at, t.claimed_until = 0
               WHERE t.claim_token = v.tok AND t.attempt = v.attempt`,
              v.params,
            )) as { affectedRows: number };
            if (r.affectedRows < b.length) throw new Error(`outcome wrote ${r.affectedRows} of ${b.length}`);
          }
          return Math.ceil(reqs.length / args.batch);
        });
      }
      log(`rep ${rep}: ${out.map((m) => `${m.kind} ${m.usPerFire.toFixed(1)}`).join(', ')}`);
      results.push(out);
      // Purge this rep's windows (not measured) so the table stays the size bench:db sees.
      await tasks.purgeOlderThan(nextWindow(), 5000);
      window--;
    }

    const kinds = results[0].map((m) => m.kind);
    const of = (k: string) => results.map((ms) => ms.find((m) => m.kind === k) as Row);
    const shown = ['Handler_update', 'Handler_write', 'Handler_delete', 'Innodb_buffer_pool_write_requests', 'Innodb_pages_written', 'Innodb_data_written'];
    const rows = kinds.map((k) => {
      const ms = of(k);
      const sp = ms.map((m) => m.splits).filter((x): x is number => x !== null);
      const b = ms[0].bytes;
      return [k, median(ms.map((m) => m.usPerFire)), Math.min(...ms.map((m) => m.usPerFire)), Math.max(...ms.map((m) => m.usPerFire)), median(ms.map((m) => m.wallMs)), ...shown.map((c) => median(ms.map((m) => m.counters[c]))), sp.length ? median(sp) * 1000 : null, median(ms.map((m) => m.newPages.data)), median(ms.map((m) => m.newPages.index)), b.claimed_by + b.attempts + b.output + b.error + b.fixed_nullable];
    });
    const head = ['variant', 'MariaDB CPU us/fire (median)', 'min', 'max', 'wall ms', ...shown.map((c) => `${c.replace(/^Handler_|^Innodb_/, '')}/fire`), 'page splits per 1000 fires', 'new clustered pages per 1000 fires', 'new secondary-index pages per 1000 fires', 'bytes after (claimed_by+attempts+output+error+non-null fixed)'];
    const md = [
      `MariaDB CPU per fire by claim/outcome variant: ${args.timers} timers x ${args.seconds} s (${fires} fires) per variant, ${args.reps} repetitions, ${args.batch} rows a statement, row format ${fmt[0]?.row_format}.`,
      '',
      markdownTable(head, rows, 2),
    ].join('\n');
    const path = writeResults('db-variants', { args, results }, md);
    process.stdout.write(`\n${md}\n\n${path}.md\n`);
  });
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
