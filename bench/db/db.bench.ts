/**
 * MariaDB's CPU per fire, without the pipeline (a command, not a test):
 *
 *   npm run bench:db -- [--timers 5000] [--seconds 20] [--reps 3] [--claim-batch 250] [--outcome-batch 250]
 *                       [--preload-minutes 1] [--purge 1] [--response-bytes 0]
 *
 * On a fresh database (migrated with the real migrations, dropped at the end) it plays, through the
 * real repositories of @timer/dal, the statements the roles issue per fire for --timers every-second
 * timers over --seconds seconds (timers x seconds fires), one kind at a time, and measures the local
 * MariaDB server's CPU (utime + stime of mariadbd in /proc, minus its idle rate) per fire for each:
 *   insert     the migrator's rows (TaskRepository.insertIgnore, timer by timer as a window is expanded)
 *   reconcile  the trigger's pending reads (SliceTaskRepository.pendingInSlice: 10 buckets, 10 s ranges)
 *   claim      the executor's claims (FireClaimRepository.claimMany, --claim-batch fires a statement)
 *   outcome    the executor's outcomes (FireOutcomeRepository.recordOutcomes, delivered, with the attempt;
 *              --response-bytes N > 0: each with a kept answer of N body bytes, docs/callback-answers.md)
 *   purge      retention (TaskRepository.purgeOlderThan): not part of a pipeline bench run, so apart
 * Each kind's CPU includes the server's deferred work (InnoDB purge of the old index entries) until it
 * is quiet again. --preload-minutes minutes of finished fires are written first (not measured), so the
 * table is not empty. --reps repetitions on the same database, each on its own minutes; the
 * median per kind is reported, with the server's handler counters per fire (rows read and written).
 * Run it alone on the server: every other client's work would count.
 * Writes .local/results/db-<time>.json and .md and prints the tables.
 */
import { DataSource } from 'typeorm';
import { FireClaimRepository, FireClaimRequest, FireOutcome, FireOutcomeRepository, NewTask, SliceTaskRepository, TaskRepository, TaskStatus } from '@timer/dal';
import { markdownTable, numericFlags, shortId, writeResults } from '../../e2e/support';
import { COUNTERS, log, mariadbPid, Measure, median, Meter, withBenchDatabase } from './meter';

const DEFAULTS = { timers: 5000, seconds: 20, reps: 3, claimBatch: 250, outcomeBatch: 250, preloadMinutes: 1, purge: 1, responseBytes: 0 };
type Args = typeof DEFAULTS;

const APP = 'bench';
const BUCKETS = 10;
const RECONCILE_MS = 10_000;
const KINDS = ['insert', 'reconcile', 'claim', 'outcome', 'purge'] as const;
type Kind = (typeof KINDS)[number];
/** The fires of every timer for `seconds` seconds from `startMs`, in the migrator's order (timer by timer). */
function firesOf(args: Args, startMs: number, seconds: number): NewTask[] {
  const rows: NewTask[] = [];
  for (let t = 1; t <= args.timers; t++) for (let s = 0; s < seconds; s++) rows.push({ app: APP, timerId: String(t), runAt: startMs + s * 1000 });
  return rows;
}

/** The same fires in the order they come due (second by second), as the executor claims them. */
function dueOrder(args: Args, startMs: number): NewTask[] {
  const rows: NewTask[] = [];
  for (let s = 0; s < args.seconds; s++) for (let t = 1; t <= args.timers; t++) rows.push({ app: APP, timerId: String(t), runAt: startMs + s * 1000 });
  return rows;
}

async function rep(args: Args, meter: Meter, db: DataSource, startMs: number, n: number): Promise<Measure[]> {
  const tasks = new TaskRepository(db);
  const slices = new SliceTaskRepository(db);
  const claims = new FireClaimRepository(db);
  const outcomes = new FireOutcomeRepository(db);
  const fires = args.timers * args.seconds;
  const out: Measure[] = [];
  const executor = `exec-${shortId()}`;
  const tokens = new Map<string, string>();
  let seq = 0;

  out.push(
    await meter.measure('insert', fires, async () => {
      const rows = firesOf(args, startMs, args.seconds);
      // The migrator writes 1,000-row statements (FireWriter.write -> insertIgnore).
      await tasks.insertIgnore(rows);
      return Math.ceil(rows.length / 1000);
    }),
  );

  out.push(
    await meter.measure('reconcile', fires, async () => {
      let statements = 0;
      let found = 0;
      for (let from = startMs; from < startMs + args.seconds * 1000; from += RECONCILE_MS) {
        const to = Math.min(from + RECONCILE_MS, startMs + args.seconds * 1000);
        for (let bucket = 0; bucket < BUCKETS; bucket++) {
          found += (await slices.pendingInSlice({ fromMs: from, toMs: to, bucket, buckets: BUCKETS })).length;
          statements++;
        }
      }
      if (found !== fires) throw new Error(`reconcile found ${found} pending fires, expected ${fires}`);
      return statements;
    }),
  );

  const due = dueOrder(args, startMs);
  out.push(
    await meter.measure('claim', fires, async () => {
      let statements = 0;
      for (let i = 0; i < due.length; i += args.claimBatch) {
        const nowMs = Date.now();
        const batch: FireClaimRequest[] = due.slice(i, i + args.claimBatch).map((f) => {
          const token = `${executor}:${seq++}`;
          tokens.set(`${f.timerId}:${f.runAt}`, token);
          return { timerId: f.timerId, runAt: f.runAt, attempt: 1, token, nowMs, leaseMs: 30_000 };
        });
        const results = await claims.claimMany(batch);
        if (!results.every((r) => r.claimed)) throw new Error('a claim was refused');
        statements++;
      }
      return statements;
    }),
  );

  out.push(
    await meter.measure('outcome', fires, async () => {
      let statements = 0;
      const response = args.responseBytes > 0 ? { status: 200, headers: { 'content-type': 'application/json' }, body: 'x'.repeat(args.responseBytes), truncated: false } : null;
      for (let i = 0; i < due.length; i += args.outcomeBatch) {
        const now = Date.now();
        const batch: FireOutcome[] = due.slice(i, i + args.outcomeBatch).map((f) => ({
          timerId: f.timerId,
          runAt: f.runAt,
          token: tokens.get(`${f.timerId}:${f.runAt}`) as string,
          attempt: 1,
          status: TaskStatus.Succeeded,
          httpStatus: 200,
          costMs: 3,
          latenessMs: 40,
          error: null,
          output: 'ok',
          claimedBy: tokens.get(`${f.timerId}:${f.runAt}`) as string,
          claimedUntil: null,
          startedAt: now - 3,
          response,
        }));
        const applied = await outcomes.recordOutcomes(batch);
        if (!applied.every(Boolean)) throw new Error('an outcome was fenced off');
        statements++;
      }
      return statements;
    }),
  );

  if (args.purge) {
    out.push(
      await meter.measure('purge', fires, async () => {
        // Only this repetition's rows are past the cutoff (earlier ones are gone, later ones are newer).
        const deleted = await tasks.purgeOlderThan(startMs + args.seconds * 1000, 5000);
        if (deleted !== fires) throw new Error(`purge deleted ${deleted}, expected ${fires}`);
        return Math.ceil(deleted / 5000) + 1;
      }),
    );
  }
  log(`rep ${n}: ${out.map((m) => `${m.kind} ${m.usPerFire.toFixed(1)} us`).join(', ')}`);
  return out;
}

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  if (args.timers < 1 || args.seconds < 1 || args.reps < 1 || args.claimBatch < 1 || args.outcomeBatch < 1) throw new Error('need --timers, --seconds, --reps, batches >= 1');
  await withBenchDatabase('db', async (db, name) => {
    const meter = new Meter(mariadbPid(), db);
    const indexes = (await db.query(`SELECT DISTINCT index_name AS i FROM information_schema.statistics WHERE table_schema = ? AND table_name = 'tasks' ORDER BY index_name`, [name])) as { i: string }[];
    log(`tasks indexes: ${indexes.map((r) => r.i).join(', ')}`);

    // Finished fires, so the indexes have a realistic depth (not measured). A day after the measured
    // fires, so that the purge of a repetition's fires leaves them.
    const minute = 60_000;
    const start = Math.floor(Date.now() / minute) * minute + 10 * minute;
    const tasks = new TaskRepository(db);
    for (let m = 0; m < args.preloadMinutes; m++) {
      await tasks.insertIgnore(firesOf(args, start + 24 * 60 * minute + m * minute, 60));
      await db.query('UPDATE tasks SET status = ?, attempt = 1, http_status = 200, claimed_by = ? WHERE status = ?', [TaskStatus.Succeeded, 'preload', TaskStatus.Pending]);
    }
    log(`preloaded ${args.preloadMinutes * 60 * args.timers} finished fires`);
    await meter.calibrate();

    const reps: Measure[][] = [];
    for (let r = 0; r < args.reps; r++) reps.push(await rep(args, meter, db, start + r * (args.seconds + 60) * 1000, r + 1));

    const kinds = KINDS.filter((k) => reps[0].some((m) => m.kind === k));
    const of = (k: Kind) => reps.map((ms) => ms.find((m) => m.kind === k) as Measure);
    const rows = kinds.map((k) => {
      const ms = of(k);
      return [k, median(ms.map((m) => m.usPerFire)), median(ms.map((m) => m.rawUsPerFire)), Math.min(...ms.map((m) => m.usPerFire)), Math.max(...ms.map((m) => m.usPerFire)), ms[0].fires / ms[0].statements, median(ms.map((m) => m.wallMs)), ...COUNTERS.map((c) => median(ms.map((m) => m.counters[c])))];
    });
    const pipelineKinds: string[] = kinds.filter((k) => k !== 'purge');
    const total = median(reps.map((ms) => ms.filter((m) => pipelineKinds.includes(m.kind)).reduce((a, m) => a + m.usPerFire, 0)));
    const head = ['kind', 'MariaDB CPU us/fire (median)', 'before idle taken out', 'min', 'max', 'fires/statement', 'wall ms', ...COUNTERS.map((c) => `${c.replace(/^Handler_|^Innodb_/, '')}/fire`)];
    const table = markdownTable(head, rows, 2);
    const md = [
      `MariaDB CPU per fire by statement kind: ${args.timers} every-second timers x ${args.seconds} s (${args.timers * args.seconds} fires), ${args.reps} repetitions, claims ${args.claimBatch} and outcomes ${args.outcomeBatch} a statement, ${args.preloadMinutes * 60 * args.timers} finished fires preloaded.`,
      `Indexes of tasks: ${indexes.map((r) => r.i).join(', ')}.`,
      '',
      table,
      '',
      `Insert + reconcile + claim + outcome (median of the repetitions' sums): ${total.toFixed(1)} us of MariaDB CPU per fire.`,
    ].join('\n');
    const path = writeResults('db', { args, indexes: indexes.map((r) => r.i), reps, total }, md);
    process.stdout.write(`\n${md}\n\n${path}.md\n`);
  });
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
