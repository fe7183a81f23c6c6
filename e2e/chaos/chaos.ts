/**
 * Chaos run (a command, not a test: it takes minutes and restarts the shared servers).
 *
 *   npm run chaos -- [--minutes 3] [--timers 200] [--fault-every 15] [--replicas 2]
 *                    [--drain-seconds 120] [--settle-seconds 300] [--redis-db 13] [--cycle-offset 0]
 *
 * Starts a Stack (e2e/support) with --replicas processes per role on a Redis database of its own
 * (--redis-db: FLUSHDB must not touch anybody else's keys) and 1-minute windows (so the accounting
 * has finished windows to check), creates --timers every-second timers calling a local Receiver and
 * injects a fault every --fault-every seconds, cycling through: SIGKILL of a random process of each
 * role (restarted at once), FLUSHDB of the stack's Redis database, a MariaDB restart and a broker
 * restart (deploy/local/*.sh restart). A fault starts no sooner than 10 s after the previous one
 * ended, so each fault has its own fires to judge it by. --cycle-offset N starts the cycle at its
 * Nth fault (0-based; e.g. 5 starts with the Redis wipe), for short runs.
 *
 * After --minutes: waits up to --drain-seconds for every fire of the run to reach the receiver,
 * disables the timers, then waits up to --settle-seconds until no fire is pending or running past
 * run_at + 2 min and none of the run is open. Then it counts fire by fire, for every (timer, second)
 * of the run: delivered, recorded missed/failed, stranded (still open), lost (neither delivered nor
 * recorded), duplicates (flagged with X-Timer-Redelivery or not, after an answered or an aborted
 * delivery), lateness overall and per fault; plus the migrators' `timer_overdue_fires` and the
 * accounting endpoint's unsettled finished windows. Writes .local/results/chaos-<time>.json and .md,
 * prints the tables, and exits 1 when a fire was lost or stranded.
 *
 * It restarts MariaDB and the broker, which every other client of them notices: run it while
 * nothing else uses those servers.
 */
import { cpus, loadavg } from 'node:os';
import { Delivery, mapLimit, markdownTable, nextSecond, numericFlags, percentiles, Percentiles, pollUntil, Receiver, ROLES, shortId, sleep, sleepUntil, Stack, writeResults } from '../support';
import { accountChaos, AFTER_FAULT_MS, faultWindow, FireRow, lateAfter, latenessIn } from './account';
import { Fault, FAULT_CYCLE, FaultInjector } from './faults';
import { MetricsWatch } from './metrics-watch';

const APP = 'chaos';
/** The bound the issue sets for a fire after a SIGKILL with a second process of the role running (ms). */
const KILL_BOUND_MS = 5000;
/** What a restart of D ms may add to a fire due during it: the broker's D + 5 s, MariaDB's D + 2 s. */
const RESTART_SLACK_MS: Partial<Record<string, number>> = { 'broker-restart': 5_000, 'mariadb-restart': 2_000 };
/** After a restarted server is back, fires are on time again within this. */
const BACK_ON_TIME_MS = 5_000;
/** A fire pending or running this long after its run_at is stranded. */
const STRANDED_AFTER_MS = 120_000;

const DEFAULTS = { minutes: 3, timers: 200, faultEvery: 15, replicas: 2, drainSeconds: 120, settleSeconds: 300, redisDb: 13, cycleOffset: 0 };
type Args = typeof DEFAULTS;

const log = (s: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);

/** A query that survives the MariaDB restart the run itself causes (pooled connections die with it). */
async function sql<T>(stack: Stack, query: string, params: unknown[] = []): Promise<T[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await stack.sql<T>(query, params);
    } catch (e) {
      if (attempt >= 5) throw e;
      await sleep(1000 * attempt);
    }
  }
}

interface Run {
  args: Args;
  timerIds: string[];
  from: number;
  to: number;
  faults: Fault[];
  settledAfterMs: number | null;
}

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  if (args.minutes <= 0 || args.timers < 1 || args.replicas < 1) throw new Error('--minutes, --timers and --replicas must be positive');
  const receiver = await Receiver.start();
  log(`receiver on ${receiver.url()}; ${args.timers} every-second timers for ${args.minutes} min, ${args.replicas} process(es) per role, a fault every ${args.faultEvery} s`);
  const stack = await Stack.start({
    id: shortId('chaos'),
    redisDb: args.redisDb,
    replicas: Object.fromEntries(ROLES.map((r) => [r, args.replicas])),
    env: { TIMER_WINDOW_MINUTES: '1' },
    beforeRoles: async (s) => {
      const foreign = await new FaultInjector(s, log, 'chaos').foreignKey();
      if (foreign !== undefined) throw new Error(`Redis db ${args.redisDb} holds ${foreign}, which is not a chaos run's: choose a database nobody uses with --redis-db`);
    },
  });
  const interrupted = () => {
    log('interrupted: stopping the stack');
    void stack.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const watch = new MetricsWatch(stack, ['executor', 'migrator']);
  let code = 0;
  try {
    log(`stack up (logs in ${stack.logDir}); creating the timers`);
    const run = await chaosRun(stack, receiver, args, watch);
    const report = await measure(stack, receiver, run, watch);
    const base = writeResults(args.replicas === 1 ? 'chaos-single' : 'chaos', report.json, report.md);
    process.stdout.write(`\n${report.md}\n`);
    log(`wrote ${base}.json and .md`);
    if (report.failed) code = 1;
  } finally {
    watch.stop();
    log('stopping the stack');
    await stack.stop();
    await receiver.close();
  }
  process.exitCode = code;
}

async function chaosRun(stack: Stack, receiver: Receiver, args: Args, watch: MetricsWatch): Promise<Run> {
  const hook = { url: receiver.url('/chaos'), method: 'POST', body: '{"chaos":true}' };
  const names = Array.from({ length: args.timers }, (_, i) => `c${i}`);
  const timerIds = await mapLimit(names, 16, (name) => stack.api.createEnabled({ app: APP, name, cron: '* * * * * *', notifyHTTPParam: hook }));
  const from = nextSecond(5000);
  const to = from + Math.round(args.minutes * 60) * 1000;
  log(`run window ${new Date(from).toISOString()} .. ${new Date(to).toISOString()}`);
  watch.start();
  const progress = setInterval(() => logProgress(receiver, timerIds.length, from, to), 10_000);
  const injector = new FaultInjector(stack, log, 'chaos');
  const faults: Fault[] = [];
  try {
    for (let at = from + args.faultEvery * 1000, k = 0; at < to - 5000; k++) {
      await sleepUntil(at);
      const kind = FAULT_CYCLE[(k + args.cycleOffset) % FAULT_CYCLE.length];
      log(`fault ${k + 1}: ${kind}`);
      const f = await injector.inject(kind);
      faults.push(f);
      log(`fault ${k + 1}: ${kind} ${f.target} ${f.ok ? 'done' : 'NOT INJECTED'} in ${f.end - f.start} ms${f.note ? ` (${f.note})` : ''}`);
      at = Math.max(at + args.faultEvery * 1000, f.end + AFTER_FAULT_MS);
    }
    await sleepUntil(to);
    // A disabled timer's late fire is recorded missed, which would hide whether a fault lost it:
    // the timers stay enabled until the run's fires arrived (or the drain time is over).
    const expected = expectedFires(timerIds, from, to);
    const drained = await pollUntil(() => undelivered(receiver.deliveries, expected) === 0, args.drainSeconds * 1000, 1000);
    log(drained ? 'every fire of the run reached the receiver' : `${undelivered(receiver.deliveries, expected)} fire(s) of the run not delivered after ${args.drainSeconds} s`);
  } finally {
    clearInterval(progress);
  }
  await mapLimit(timerIds, 16, (id) => stack.api.unable(APP, id));
  log('timers disabled; waiting until the ledger settles');
  const t0 = Date.now();
  const settled = await pollUntil(
    async () => {
      const [r] = await sql<{ overdue: string | null; open: string | null }>(
        stack,
        'SELECT SUM(status IN (0, 1) AND run_at < ?) AS overdue, SUM(status IN (0, 1) AND run_at >= ? AND run_at < ?) AS open FROM tasks',
        [Date.now() - STRANDED_AFTER_MS, from, to],
      );
      return Number(r.overdue ?? 0) === 0 && Number(r.open ?? 0) === 0;
    },
    args.settleSeconds * 1000,
    2000,
  );
  // Room for a late duplicate to show, and for the reconciler to refresh its gauges (every 5 s).
  await sleep(12_000);
  return { args, timerIds, from, to, faults, settledAfterMs: settled ? Date.now() - t0 : null };
}

function expectedFires(timerIds: string[], from: number, to: number): string[] {
  const out: string[] = [];
  for (const id of timerIds) for (let t = from; t < to; t += 1000) out.push(`${id}-${t}`);
  return out;
}

function undelivered(deliveries: Delivery[], expected: string[]): number {
  const got = new Set<string>();
  for (const d of deliveries) if (!d.aborted && d.status >= 200 && d.status < 300) got.add(d.fireId);
  return expected.filter((id) => !got.has(id)).length;
}

let lastCount = 0;
function logProgress(receiver: Receiver, timers: number, from: number, to: number): void {
  const now = Date.now();
  const n = receiver.deliveries.length;
  const due = Math.ceil(Math.max(0, Math.min(to, now - 1000) - from) / 1000);
  const inRun = new Set(receiver.deliveries.filter((d) => d.scheduledAt >= from && d.scheduledAt < Math.min(to, now - 1000)).map((d) => d.fireId)).size;
  log(`${Math.round((n - lastCount) / 10)}/s received; of the fires due so far ${inRun}/${due * timers} reached the receiver; load ${loadavg()[0].toFixed(2)}`);
  lastCount = n;
}

interface Report {
  json: Record<string, unknown>;
  md: string;
  failed: boolean;
}

interface WindowAccount {
  windowStart: number;
  expected: number;
  delivered: number;
  failed: number;
  missed: number;
  settled: number;
  open: number;
  finished: boolean;
}

async function measure(stack: Stack, receiver: Receiver, run: Run, watch: MetricsWatch): Promise<Report> {
  const { args, from, to, faults } = run;
  await watch.scrape();
  const rows = new Map<string, FireRow>();
  for (const r of await sql<{ timer_id: string; run_at: string; status: number; error: string | null }>(
    stack,
    'SELECT timer_id, run_at, status, error FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ?',
    [APP, from, to],
  )) {
    const fireId = `${r.timer_id}-${r.run_at}`;
    rows.set(fireId, { fireId, status: Number(r.status), error: r.error });
  }
  const a = accountChaos(expectedFires(run.timerIds, from, to), receiver.deliveries, rows, faults);
  const [overdueRow] = await sql<{ n: string }>(stack, 'SELECT COUNT(*) AS n FROM tasks WHERE status IN (0, 1) AND run_at < ?', [Date.now() - STRANDED_AFTER_MS]);
  const overdueGauge = await watch.current('migrator', 'timer_overdue_fires');
  const unsettledGauge = await watch.current('migrator', 'timer_unsettled_fires_finished_windows');
  const accounting = (
    await stack.api.call<{ data: { windows: WindowAccount[]; unsettledFinished: number } }>('GET', `/api/app/v1/accounting?app=${APP}&from=${from - 120_000}&to=${Date.now()}`)
  ).data;
  const finished = accounting.windows.filter((w) => w.finished);
  const badWindows = finished.filter((w) => w.open > 0 || w.expected !== w.settled);

  const overall = percentiles([...a.firstDelivery.values()].filter((f) => f.scheduledAt >= from && f.scheduledAt < to).map((f) => f.lateMs));
  const single = args.replicas === 1;
  const faultRows = faults.map((f) => {
    const w = latenessIn(a, [faultWindow(f)]);
    const slack = RESTART_SLACK_MS[f.kind];
    const bound = f.kind.startsWith('sigkill:') ? (single ? f.end - f.start + KILL_BOUND_MS : KILL_BOUND_MS) : slack === undefined ? undefined : f.end - f.start + slack;
    const lateAfterMs = slack === undefined ? undefined : lateAfter(a, f.end);
    const within = bound === undefined ? undefined : w.late.max <= bound && w.neverReached === 0 && (lateAfterMs === undefined || lateAfterMs <= BACK_ON_TIME_MS);
    return { ...f, atS: (f.start - from) / 1000, tookMs: f.end - f.start, ...w, boundMs: bound, lateAfterMs, withinBound: within };
  });
  const kinds = [...new Set(faults.map((f) => f.kind))];
  const byKind = kinds.map((kind) => {
    const of = faults.filter((f) => f.kind === kind);
    return { kind, faults: of.length, ...latenessIn(a, of.map(faultWindow)) };
  });
  const dup = (flagged: boolean, afterAnswered: boolean) => a.duplicates.filter((d) => d.flagged === flagged && d.afterAnswered === afterAnswered).length;
  const dupByFault: Record<string, { deliveries: number; gapMs: Percentiles }> = {};
  for (const fault of new Set(a.duplicates.map((d) => d.fault))) {
    const of = a.duplicates.filter((d) => d.fault === fault);
    dupByFault[fault] = { deliveries: of.length, gapMs: percentiles(of.map((d) => d.gapMs)) };
  }
  const redeliveriesMetric = watch.total('executor', 'timer_duplicate_deliveries_total', 'reason');
  const duplicateMessagesMetric = watch.total('executor', 'timer_duplicate_messages_total', 'reason');
  const rescuedMetric = watch.total('migrator', 'timer_reconciler_rescued_total', 'reason');

  const killFaults = faultRows.filter((f) => f.kind.startsWith('sigkill:'));
  const restartFaults = faultRows.filter((f) => f.lateAfterMs !== undefined);
  const dupsOutsideExecutorKills = a.duplicates.filter((d) => d.fault !== 'sigkill:executor').length;
  const verdicts: [string, boolean][] = [
    ['0 fires lost', a.lost.length === 0],
    ['0 fires stranded', a.stranded.length === 0 && Number(overdueRow.n) === 0],
    [
      single ? 'a SIGKILL plus restart makes fires at most the restart time + 5 s late' : 'a SIGKILL of one process makes fires at most 5 s late',
      killFaults.every((f) => f.withinBound),
    ],
    [
      `a restart of D s makes fires at most D + ${RESTART_SLACK_MS['broker-restart']! / 1000} s (broker) or D + ${RESTART_SLACK_MS['mariadb-restart']! / 1000} s (MariaDB) late, on time again within ${BACK_ON_TIME_MS / 1000} s of its return`,
      restartFaults.every((f) => f.withinBound),
    ],
    ['every duplicate flagged (X-Timer-Redelivery: 1)', a.duplicates.every((d) => d.flagged)],
    ['duplicates only around an executor kill', dupsOutsideExecutorKills === 0],
    ['timer_overdue_fires reads 0 on every migrator', Object.values(overdueGauge).every((v) => v === 0)],
    ['accounting: expected = settled for every finished window', badWindows.length === 0 && accounting.unsettledFinished === 0],
    ['every fault injected as meant', faults.every((f) => f.ok)],
  ];

  const p = (x: Percentiles) => [x.p50, x.p95, x.p99, x.max];
  const md = [
    `# Chaos run ${new Date().toISOString()}`,
    '',
    `${cpus().length} cores, node ${process.version}; ${args.replicas} process(es) per role; ${run.timerIds.length} every-second timers; ` +
      `run ${(to - from) / 1000} s from ${new Date(from).toISOString()}; ${faults.length} faults, one every ${args.faultEvery} s at the earliest ` +
      `(no sooner than ${AFTER_FAULT_MS / 1000} s after the previous one ended); window 1 min; other settings the roles' defaults.` +
      (run.settledAfterMs === null ? ` The ledger had NOT settled ${args.settleSeconds} s after the timers were disabled.` : ` Ledger settled ${Math.round(run.settledAfterMs / 1000)} s after the timers were disabled.`),
    '',
    '## Verdicts',
    '',
    markdownTable(['check', 'result'], verdicts.map(([name, ok]) => [name, ok ? 'pass' : 'FAIL'])),
    '',
    '## Fires of the run',
    '',
    markdownTable(
      ['expected', 'delivered', 'recorded missed/failed', 'stranded', 'lost', 'early', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
      [[a.expected, a.delivered, Object.values(a.recorded).reduce((x, y) => x + y, 0), a.stranded.length, a.lost.length, a.early, ...p(overall)]],
    ),
    '',
    'Lateness: receive time of the first delivery minus the fire time. Recorded without delivery: ' + (Object.keys(a.recorded).length ? JSON.stringify(a.recorded) : 'none') + '.',
    ...(a.lost.length ? ['', `Lost (first 20): ${a.lost.slice(0, 20).join(', ')}`] : []),
    ...(a.stranded.length ? ['', `Stranded (first 20): ${a.stranded.slice(0, 20).join(', ')}`] : []),
    '',
    '## Duplicates (a delivery of a fire after an earlier one reached the receiver)',
    '',
    markdownTable(
      ['earlier delivery', 'flagged X-Timer-Redelivery: 1', 'unflagged'],
      [
        ['answered 2xx (the receiver already had it)', dup(true, true), dup(false, true)],
        ['aborted (cut off mid-call)', dup(true, false), dup(false, false)],
      ],
    ),
    '',
    `${a.duplicates.length} duplicate deliveries of ${new Set(a.duplicates.map((d) => d.fireId)).size} fires.`,
    ...(a.duplicates.length
      ? [
          '',
          markdownTable(
            ['fault around the first delivery', 'duplicates', 'gap to the first delivery p50 ms', 'max ms'],
            Object.entries(dupByFault).map(([fault, v]) => [fault, v.deliveries, v.gapMs.p50, v.gapMs.max]),
          ),
          '',
        ]
      : []),
    `Executors' \`timer_duplicate_deliveries_total\`: ${JSON.stringify(redeliveriesMetric)}; \`timer_duplicate_messages_total\` (fenced, not delivered): ${JSON.stringify(duplicateMessagesMetric)} ` +
      '(summed over every executor process at its last scrape, every 5 s: a killed process\'s last seconds are not counted).',
    `Reconciler \`timer_reconciler_rescued_total\`: ${JSON.stringify(rescuedMetric)}.`,
    '',
    `## Faults (fires scheduled from the fault's start until ${AFTER_FAULT_MS / 1000} s after it ended)`,
    '',
    markdownTable(
      ['#', 'at s', 'fault', 'target', 'took ms', 'injected', 'fires', 'not reached', 'p50 ms', 'p99 ms', 'max ms', 'max answered ms', 'bound ms', 'late until ms after', 'within', 'note'],
      faultRows.map((f, i) => [
        i + 1,
        f.atS,
        f.kind,
        f.target,
        f.tookMs,
        f.ok ? 'yes' : 'NO',
        f.fires,
        f.neverReached,
        f.late.p50,
        f.late.p99,
        f.late.max,
        f.answeredMaxMs,
        f.boundMs,
        f.lateAfterMs,
        f.withinBound === undefined ? '' : f.withinBound ? 'yes' : 'NO',
        f.note ?? '',
      ]),
      1,
    ),
    '',
    single
      ? '"took" of a SIGKILL is kill to healthy again (the restart time); its bound is that + 5 s.'
      : '"took" of a SIGKILL is kill to healthy again; the other process of the role ran throughout; bound 5 s.',
    '"max ms" is the lateness of a fire\'s first delivery (it reached the receiver, answered or not), "max answered ms" of its first answered one; ' +
      'the bound is judged on the first.',
    `A restart's "took" (D) runs from its command to the server answering again; its bound is D + 5 s (broker) or D + 2 s (MariaDB), and ` +
      `"late until ms after" is the latest time after its return at which a fire due then was still more than 1 s late (at most ${BACK_ON_TIME_MS / 1000} s).`,
    '',
    '## Lateness by fault kind',
    '',
    markdownTable(['fault', 'faults', 'fires', 'not reached', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'], byKind.map((k) => [k.kind, k.faults, k.fires, k.neverReached, ...p(k.late)])),
    '',
    '## After the run',
    '',
    `Rows pending or running past run_at + 2 min: ${overdueRow.n}. \`timer_overdue_fires\` per migrator: ${JSON.stringify(overdueGauge)}; ` +
      `\`timer_unsettled_fires_finished_windows\`: ${JSON.stringify(unsettledGauge)}.`,
    `Accounting (\`GET /api/app/v1/accounting\`): ${finished.length} finished windows, expected ${sum(finished, 'expected')}, settled ${sum(finished, 'settled')} ` +
      `(delivered ${sum(finished, 'delivered')}, missed ${sum(finished, 'missed')}, failed ${sum(finished, 'failed')}), open ${sum(finished, 'open')}; unsettledFinished ${accounting.unsettledFinished}.`,
    ...(badWindows.length
      ? ['', markdownTable(['window', 'expected', 'settled', 'open'], badWindows.map((w) => [new Date(w.windowStart).toISOString(), w.expected, w.settled, w.open]))]
      : []),
    '',
  ].join('\n');
  const json = {
    args,
    from,
    to,
    settledAfterMs: run.settledAfterMs,
    verdicts: Object.fromEntries(verdicts),
    fires: { expected: a.expected, delivered: a.delivered, recorded: a.recorded, stranded: a.stranded, lost: a.lost, early: a.early, latenessMs: overall },
    duplicates: { deliveries: a.duplicates.length, flaggedAfterAnswered: dup(true, true), unflaggedAfterAnswered: dup(false, true), flaggedAfterAborted: dup(true, false), unflaggedAfterAborted: dup(false, false), byFault: dupByFault, list: a.duplicates.slice(0, 500) },
    metrics: { duplicateDeliveries: redeliveriesMetric, duplicateMessages: duplicateMessagesMetric, rescued: rescuedMetric, overdueGauge, unsettledGauge },
    faults: faultRows,
    byKind,
    overdueRows: Number(overdueRow.n),
    accounting,
  };
  return { json, md, failed: a.lost.length > 0 || a.stranded.length > 0 || Number(overdueRow.n) > 0 };
}

const sum = (ws: WindowAccount[], k: keyof WindowAccount) => ws.reduce((n, w) => n + Number(w[k]), 0);

main().catch((e: unknown) => {
  process.stderr.write(`chaos: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
