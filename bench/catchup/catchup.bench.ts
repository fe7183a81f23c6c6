/**
 * Catch-up benchmark (a command, not a test): on-time fires while a large backlog drains.
 *
 *   npm run bench:catchup -- [--overdue 150000] [--timers 3000] [--spread-minutes 20] [--seconds 90]
 *                            [--drain-max-seconds 600]
 *
 * Before the roles start (Stack `beforeRoles`, on a fresh database) it inserts --timers enabled
 * timers, whose cron (Jan 1st, 00:00:00) does not come due during the run, and --overdue pending fire
 * rows of them with run_at spread over the last --spread-minutes: what the ledger holds after the
 * roles were down that long. The fires are within the misfire window (60 min), so each is delivered,
 * late, to the local receiver, which answers at once. Only rows are written, no Redis slice index (as
 * after a Redis loss too): the scheduler offers the past minutes again (lookback 60 min), the trigger
 * finds their fires in MySQL, the reconciler rescues what is left.
 *
 * Then it starts the roles and, once they are healthy, creates and enables one every-second timer
 * and measures its fires for --seconds while the backlog drains: lateness (receive - scheduled
 * time) p50/p99/max and fires missing; the backlog (open rows of the overdue fires, from MySQL every
 * second) and the backlog deliveries per second at the receiver; when the backlog was fully drained
 * (watched up to --drain-max-seconds after the roles were healthy). Target (issue 10): the
 * every-second timer's p99 lateness under 1 s while the backlog drains, no fire missing.
 * Writes .local/results/catchup-<time>.json and .md and prints the tables.
 */
import { cpus } from 'node:os';
import { Delivery, markdownTable, nextSecond, numericFlags, percentiles, Receiver, shortId, sleep, sleepUntil, Stack, writeResults } from '../../e2e/support';

const BACKLOG_APP = 'catchup';
const NOW_APP = 'catchup-now';
/** Jan 1st, 00:00:00: the backlog's timers are enabled but bring no fires of their own into the run. */
const NEVER = '0 0 0 1 1 *';
const TARGET_P99_MS = 1000;
/** After the measured window, how long a fire of the every-second timer may still arrive. */
const LATE_ARRIVAL_MS = 30_000;
/** The start-up the report details: CPU per role over its first seconds, the timer's first fires one by one. */
const STARTUP_S = 10;
const FIRST_FIRES = 5;

const DEFAULTS = { overdue: 150_000, timers: 3000, spreadMinutes: 20, seconds: 90, drainMaxSeconds: 600 };
type Args = typeof DEFAULTS;

const log = (s: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);

/** One sample of the backlog, every second. */
interface Sample {
  at: number;
  open: number;
  /** Backlog deliveries at the receiver so far. */
  received: number;
  /** CPU seconds per role so far. */
  cpu: Record<string, number>;
}

async function loadBacklog(s: Stack, args: Args, hookUrl: string): Promise<{ from: number; to: number; ms: number }> {
  const t0 = Date.now();
  await s.sql('INSERT IGNORE INTO apps (app) VALUES (?), (?)', [BACKLOG_APP, NOW_APP]);
  const hook = JSON.stringify({ url: hookUrl, method: 'POST', body: '{"catchup":true}' });
  for (let i = 0; i < args.timers; i += 1000) {
    const rows = [];
    for (let k = i; k < Math.min(args.timers, i + 1000); k++) rows.push([BACKLOG_APP, `b${k}`, `b${k}`, NEVER, 'UTC', hook, 2]);
    await s.sql('INSERT INTO timers (app, name, live_name, cron, time_zone, notify_http_param, status) VALUES ?', [rows]);
  }
  const ids = (await s.sql<{ id: string }>('SELECT id FROM timers WHERE app = ? ORDER BY id', [BACKLOG_APP])).map((r) => r.id);
  // Fire j belongs to timer j mod T and is due at from + j * span / N: distinct (timer, run_at) pairs,
  // evenly spread, all in the past.
  const to = Date.now() - 5000;
  const from = to - args.spreadMinutes * 60_000;
  const span = to - from;
  for (let j = 0; j < args.overdue; j += 5000) {
    const rows = [];
    for (let k = j; k < Math.min(args.overdue, j + 5000); k++) rows.push([BACKLOG_APP, ids[k % ids.length], from + Math.floor((k * span) / args.overdue)]);
    await s.sql('INSERT INTO tasks (app, timer_id, run_at) VALUES ?', [rows]);
  }
  return { from, to, ms: Date.now() - t0 };
}

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  if (args.timers < 1 || args.overdue < args.timers || args.seconds < 1) throw new Error('need --timers >= 1, --overdue >= --timers, --seconds >= 1');
  let backlogReceived = 0;
  const onTime: Delivery[] = [];
  const receiver = await Receiver.start({ record: false, onDelivery: (d) => (d.path === '/now' ? onTime.push(d) : backlogReceived++) });
  let backlog = { from: 0, to: 0, ms: 0 };
  log(`receiver on ${receiver.url()}; ${args.overdue} overdue fires of ${args.timers} timers over the last ${args.spreadMinutes} min`);
  const stack = await Stack.start({
    id: shortId('catchup'),
    env: { TIMER_LOG_LEVEL: 'warn' },
    beforeRoles: async (s) => {
      backlog = await loadBacklog(s, args, receiver.url('/backlog'));
      log(`inserted ${args.overdue} overdue fire rows in ${backlog.ms} ms; starting the roles`);
    },
  });
  try {
    const healthyAt = Date.now();
    const startMs = healthyAt - backlog.to;
    log(`roles healthy ${Math.round(startMs / 1000)} s after the last overdue fire's time (logs in ${stack.logDir}); creating the every-second timer`);
    const cpu0 = stack.cpuSeconds();
    const samples: Sample[] = [{ at: healthyAt, open: await openBacklog(stack), received: backlogReceived, cpu: cpu0 }];
    const timerId = await stack.api.createEnabled({ app: NOW_APP, name: 'every-second', cron: '* * * * * *', notifyHTTPParam: { url: receiver.url('/now'), method: 'POST' } });
    const enabledAt = Date.now();
    const from = nextSecond();
    const to = from + args.seconds * 1000;
    let drainedAt: number | undefined;
    const deadline = healthyAt + args.drainMaxSeconds * 1000;
    // Sample until the measured window (and its late arrivals) is over and the backlog drained, or the deadline.
    for (let at = nextSecond(); ; at += 1000) {
      await sleepUntil(at);
      const open = await openBacklog(stack);
      samples.push({ at: Date.now(), open, received: backlogReceived, cpu: stack.cpuSeconds() });
      if (drainedAt === undefined && open === 0) {
        drainedAt = Date.now();
        log(`backlog drained ${((drainedAt - healthyAt) / 1000).toFixed(1)} s after the roles were healthy`);
      }
      if (samples.length % 10 === 0) log(progressLine(samples, onTime, from, Math.min(Date.now(), to)));
      const windowDone = Date.now() >= to + LATE_ARRIVAL_MS || (Date.now() >= to + 2000 && arrivals(onTime, from, to).size === args.seconds);
      if ((windowDone && drainedAt !== undefined) || Date.now() >= deadline) break;
    }
    await sleep(1000);
    const cpu = stack.cpuSeconds();
    const report = await summarize(stack, args, { timerId, enabledAt, healthyAt, from, to, samples, drainedAt, onTime, backlog, backlogReceived, cpu: diffCpu(cpu0, cpu) });
    const base = writeResults('catchup', report.json, report.md);
    process.stdout.write(`\n${report.md}\n`);
    log(`wrote ${base}.json and .md`);
  } finally {
    log('stopping the stack');
    await stack.stop();
    await receiver.close();
  }
}

/** Open (pending or running) rows of the overdue fires. */
async function openBacklog(stack: Stack): Promise<number> {
  const [r] = await stack.sql<{ n: string }>('SELECT COUNT(*) AS n FROM tasks WHERE app = ? AND status IN (0, 1)', [BACKLOG_APP]);
  return Number(r.n);
}

/** The first arrival of each fire of the every-second timer in [from, to), by run time. */
function arrivals(onTime: Delivery[], from: number, to: number): Map<number, Delivery> {
  const out = new Map<number, Delivery>();
  for (const d of onTime) if (d.scheduledAt >= from && d.scheduledAt < to && !out.has(d.scheduledAt)) out.set(d.scheduledAt, d);
  return out;
}

function progressLine(samples: Sample[], onTime: Delivery[], from: number, until: number): string {
  const last = samples[samples.length - 1];
  const before = samples[Math.max(0, samples.length - 11)];
  const secs = Math.max(1, (last.at - before.at) / 1000);
  const recent = [...arrivals(onTime, Math.max(from, until - 10_000), until).values()].map((d) => d.receivedAt - d.scheduledAt);
  const p = percentiles(recent);
  return (
    `backlog open ${last.open}, drained ${Math.round((before.open - last.open) / secs)}/s, delivered ${Math.round((last.received - before.received) / secs)}/s; ` +
    `every-second timer, last 10 s: ${recent.length} fires, p50 ${p.p50} ms, max ${p.max} ms`
  );
}

const diffCpu = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, Number((v - (a[k] ?? 0)).toFixed(1))]));

interface Measured {
  timerId: string;
  enabledAt: number;
  healthyAt: number;
  from: number;
  to: number;
  samples: Sample[];
  drainedAt?: number;
  onTime: Delivery[];
  backlog: { from: number; to: number; ms: number };
  backlogReceived: number;
  cpu: Record<string, number>;
}

async function summarize(stack: Stack, args: Args, m: Measured): Promise<{ json: Record<string, unknown>; md: string }> {
  const got = arrivals(m.onTime, m.from, m.to);
  const late = [...got.values()].map((d) => d.receivedAt - d.scheduledAt);
  const p = percentiles(late);
  const missing: number[] = [];
  for (let t = m.from; t < m.to; t += 1000) if (!got.has(t)) missing.push(t);
  const duplicates = m.onTime.filter((d) => d.scheduledAt >= m.from && d.scheduledAt < m.to).length - got.size;
  const missingRows = missing.length
    ? await stack.sql<{ run_at: string; status: number; error: string | null }>('SELECT run_at, status, error FROM tasks WHERE timer_id = ? AND run_at IN (?)', [m.timerId, missing])
    : [];
  const statuses = await stack.sql<{ status: number; n: string }>('SELECT status, COUNT(*) AS n FROM tasks WHERE app = ? GROUP BY status', [BACKLOG_APP]);
  const byStatus = Object.fromEntries(statuses.map((r) => [['pending', 'running', 'succeeded', 'failed', 'missed'][r.status] ?? String(r.status), Number(r.n)]));
  const lanes = Object.fromEntries(
    await Promise.all(['timer-tasks', 'timer-tasks-catchup'].map(async (t) => [t, (await stack.topicStats(t).catch(() => undefined))?.msgInCounter ?? null] as const)),
  );
  const met = late.length > 0 && p.p99 < TARGET_P99_MS && missing.length === 0;

  // Per 10 s of the measured window: the timer's lateness and what the backlog did meanwhile.
  const rows: (string | number | null)[][] = [];
  for (let t = m.from; t < m.to; t += 10_000) {
    const slice = [...got.values()].filter((d) => d.scheduledAt >= t && d.scheduledAt < t + 10_000).map((d) => d.receivedAt - d.scheduledAt);
    const q = percentiles(slice);
    const s0 = sampleAt(m.samples, t);
    const s1 = sampleAt(m.samples, t + 10_000);
    const secs = s0 && s1 && s1.at > s0.at ? (s1.at - s0.at) / 1000 : NaN;
    rows.push([
      `${(t - m.from) / 1000}-${(t - m.from) / 1000 + 10}`,
      slice.length,
      q.p50,
      q.p99,
      q.max,
      s1?.open ?? null,
      s0 && s1 ? (s0.open - s1.open) / secs : null,
      s0 && s1 ? (s1.received - s0.received) / secs : null,
    ]);
  }
  const drainedS = m.drainedAt === undefined ? null : (m.drainedAt - m.healthyAt) / 1000;
  const first = m.samples[0];
  const md = [
    `# Catch-up benchmark ${new Date().toISOString()}`,
    '',
    `${cpus().length} cores, node ${process.version}. Backlog: ${args.overdue} pending fires of ${args.timers} enabled timers, run_at spread over ` +
      `${new Date(m.backlog.from).toISOString()} .. ${new Date(m.backlog.to).toISOString()} (${args.spreadMinutes} min), inserted as rows only ` +
      `(no slice index) in ${(m.backlog.ms / 1000).toFixed(1)} s before the roles started; one process per role, the roles' default settings ` +
      `(executor concurrency 1000, catch-up lane a tenth of it). The every-second timer was enabled ${((m.enabledAt - m.healthyAt) / 1000).toFixed(1)} s after the roles were healthy; ` +
      `measured ${args.seconds} s of its fires from ${new Date(m.from).toISOString()}.`,
    '',
    '## Every-second timer while the backlog drains',
    '',
    markdownTable(
      ['expected', 'arrived', 'missing', 'duplicates', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', `target p99 < ${TARGET_P99_MS} ms, none missing`],
      [[args.seconds, got.size, missing.length, duplicates, p.p50, p.p95, p.p99, p.max, met ? 'met' : 'MISSED']],
    ),
    ...(missingRows.length ? ['', `Missing fires' rows: ${JSON.stringify(missingRows.slice(0, 20))}`] : []),
    '',
    '## Backlog',
    '',
    markdownTable(
      ['overdue fires', 'open when the roles were healthy', 'drained after (s)', 'mean drain /s', 'delivered at the receiver', 'rows by status at the end'],
      [[args.overdue, first?.open ?? null, drainedS ?? `not within ${args.drainMaxSeconds} s`, drainedS ? args.overdue / drainedS : null, m.backlogReceived, JSON.stringify(byStatus)]],
      1,
    ),
    '',
    `Task messages in per topic: ${JSON.stringify(lanes)}. CPU seconds per role from the enable to the end: ${JSON.stringify(m.cpu)}; ` +
      `in the first ${STARTUP_S} s after the roles were healthy: ${JSON.stringify(diffCpu(first.cpu, (sampleAt(m.samples, m.healthyAt + STARTUP_S * 1000) ?? first).cpu))}.`,
    '',
    `The every-second timer's first ${FIRST_FIRES} fires, lateness ms: ${JSON.stringify([...got.values()].sort((a, b) => a.scheduledAt - b.scheduledAt).slice(0, FIRST_FIRES).map((d) => d.receivedAt - d.scheduledAt))}.`,
    '',
    '## Per 10 s of the measured window',
    '',
    markdownTable(['seconds', 'fires', 'p50 ms', 'p99 ms', 'max ms', 'backlog open at end', 'backlog drained /s', 'backlog delivered /s'], rows),
    '',
  ].join('\n');
  const json = {
    args,
    backlog: { ...m.backlog, overdue: args.overdue, openAtStart: first?.open ?? null, drainedAfterS: drainedS, deliveredAtReceiver: m.backlogReceived, byStatus },
    everySecond: { timerId: m.timerId, from: m.from, to: m.to, expected: args.seconds, arrived: got.size, missing, duplicates, latenessMs: p, targetMet: met, perFire: [...got.values()].map((d) => [d.scheduledAt, d.receivedAt - d.scheduledAt]) },
    lanes,
    cpuSeconds: m.cpu,
    samples: m.samples.map((s) => [s.at - m.healthyAt, s.open, s.received, s.cpu]),
  };
  return { json, md };
}

/** The first backlog sample taken at or after `at`. */
const sampleAt = (samples: Sample[], at: number) => samples.find((s) => s.at >= at);

main().catch((e: unknown) => {
  process.stderr.write(`catchup bench: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
