/**
 * Firing-pipeline benchmark (a command, not a test).
 *
 *   node scripts/run-ts.js bench/pipeline/pipeline.bench.ts [--rate 1000] [--duration 30] [--warmup 5]
 *        [--setup api|bulk] [--window-minutes 1] [--bullmq-workers 2] [--bullmq-concurrency 200]
 *        [--ceiling-seconds 5] [--executors 1] [--skip ours,bullmq,ceiling,burst] [--shape every-second|spike|window]
 *   BENCH_EXPLAIN=1 also prints, for ours, the latest and still-pending task rows of the window, its
 *   rows per second, and the executor's and trigger's timer_* metrics (where late fires went).
 *   BENCH_TRACE=1 prints, for ours, every 5 s from the roles' start to the end: deliveries/s (all of
 *   them, warm-up included), their lateness p50/p99 and oldest scheduled second, how far ahead fires exist,
 *   and CPU seconds per role and server in those 5 s (where a start-up backlog forms and drains).
 *
 * Starts its own stack (the five built roles as processes, a fresh database, Redis key prefix and
 * Pulsar namespace; see e2e/support/stack.ts) and a local receiver, then:
 *  1. ours: R every-second timers ("* * * * * *"), so R fires/s, all due on whole seconds (a burst
 *     of R callbacks every second). `--setup api` creates and enables them through the REST API
 *     (enable pre-creates the fires); `--setup bulk` inserts enabled timer rows in MySQL before the
 *     roles start and lets the migrator expand them (for rates where the API setup is slow). Measures
 *     S seconds of fires after a warm-up: lateness (receive - X-Timer-Scheduled-At), duplicates,
 *     missed = expected - delivered, CPU seconds per role and per server process. --executors N runs
 *     N executor processes (replicas on one subscription), as --bullmq-workers does for BullMQ. One
 *     is the default: on 2 cores a second one costs more CPU than it adds (5,000/s: p50 283 ms with
 *     one, 9.7 s with two; 3,000/s: 152 and 116 ms, with 9.3 against 14.6 executor CPU seconds).
 *  2. bullmq: the same schedule through BullMQ 5 on the same Redis (own prefix): one delayed job per
 *     fire (jobId `<timer>-<runAt>`, delay to its second), added before the window, worked by
 *     --bullmq-workers child processes (concurrency --bullmq-concurrency each) making the same HTTP
 *     call (same X-Timer-* headers, undici keep-alive). Same accounting.
 *  3. ceiling: a bare keep-alive HTTP loop (64 connections, child process) to the same receiver.
 *  4. burst: the same schedule from a bare sender process (R requests at once each whole second,
 *     256 connections): the lateness the machine allows any sender of this schedule.
 * --shape spike: the top-of-hour burst instead. Ours gets R hourly timers ("0 M * * * *", minute M the
 * first whole minute at least 90 s and the warm-up after the start, so the fires exist before it): R
 * fires due at one second and nothing else due, the shape of the hourly and daily crons at :00 of
 * bench:scale's realistic mix (e.g. --rate 137000 for its 1,000,000 timers). BullMQ gets R delayed jobs
 * due at one second, the burst sender R requests at once; --duration is 1. Each system first gets a
 * tenth as many fires 10 s before the spike (not counted; ours: timers at second 50 of the minute
 * before): a service at the top of the hour is warm, not started a minute ago.
 * --shape window: the same R fires/s for --duration s (at most 60), but only in the window, as BullMQ and
 * the burst sender get them: ours gets R timers firing at each second of those --duration seconds of one
 * minute ("0-19 M * * * *" for 20 s; minute M chosen as for a spike), with the spike's warm tenth 10 s
 * before. The default every-second shape also loads ours through the whole warm-up (its timers fire from
 * the roles' start, and the migrator writes their next minutes meanwhile), where BullMQ's jobs and the
 * burst sender's calls exist only for the window: this shape compares the three on the same work.
 * Writes bench/results/pipeline-<timestamp>.json, .md and .png (lateness p50/p99 per second).
 * Ours also records the resident memory of each role and server, and each role's V8 heap in use (its
 * /metrics), every 10 s of the window (a soak is a long --duration, e.g. `--duration 1800 --skip
 * bullmq,ceiling,burst`). The .md gives each process's growth after the window's first 5 minutes: the
 * median of the window's last 5 minutes against the median of minutes 5-10 (two halves of what follows
 * minute 5 when shorter), so a GC sawtooth is no growth and a leak or a step that stays is; and beside
 * it the peak figure, the largest sample after minute 5 against the one at minute 5, which counts a GC
 * high point as growth. A -memory.png charts the resident memory, a -heap.png the heap.
 */
import { ChildProcess, fork } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { loadBullmq } from './bullmq-peer';
import Redis from 'ioredis';
import { Agent, request } from 'undici';
import { Delivery, infra, nextSecond, percentiles, Percentiles, procCpuSeconds, Receiver, ROLES, shortId, sleep, sleepUntil, Stack } from '../../e2e/support';
import { drawLineChart } from './chart';
import { memoryGrowth, MemorySample } from './memory-growth';

const ROOT = join(__dirname, '..', '..').replace(/[\\/]dist$/, '');
const RESULTS = join(ROOT, 'bench', 'results');

interface Args {
  rate: number;
  duration: number;
  warmup: number;
  setup: 'api' | 'bulk';
  windowMinutes: number;
  bullmqWorkers: number;
  bullmqConcurrency: number;
  ceilingSeconds: number;
  executors: number;
  skip: Set<string>;
  /**
   * every-second: R every-second timers, measured for --duration s; spike: R fires due at one second (top
   * of the hour); window: R fires/s due only in the --duration s measured.
   */
  shape: 'every-second' | 'spike' | 'window';
}

function parseArgs(argv: string[]): Args {
  const a: Args = { rate: 1000, duration: 30, warmup: 5, setup: 'api', windowMinutes: 1, bullmqWorkers: 2, bullmqConcurrency: 200, ceilingSeconds: 5, executors: 1, skip: new Set(), shape: 'every-second' };
  let setupGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    const num = () => {
      const n = Number(value);
      if (!Number.isFinite(n) || n < 0) throw new Error(`bad ${flag} ${value}`);
      return n;
    };
    switch (flag) {
      case '--rate': a.rate = Math.round(num()); break;
      case '--duration': a.duration = num(); break;
      case '--warmup': a.warmup = num(); break;
      case '--window-minutes': a.windowMinutes = num(); break;
      case '--bullmq-workers': a.bullmqWorkers = num(); break;
      case '--bullmq-concurrency': a.bullmqConcurrency = num(); break;
      case '--ceiling-seconds': a.ceilingSeconds = num(); break;
      case '--executors': a.executors = Math.max(1, Math.round(num())); break;
      case '--skip': a.skip = new Set(value.split(',')); break;
      case '--shape':
        if (value !== 'every-second' && value !== 'spike' && value !== 'window') throw new Error(`bad --shape ${value}`);
        a.shape = value;
        break;
      case '--setup':
        if (value !== 'api' && value !== 'bulk') throw new Error(`bad --setup ${value}`);
        a.setup = value;
        setupGiven = true;
        break;
      default:
        throw new Error(`unknown argument ${flag}`);
    }
  }
  if (!setupGiven && a.rate > 2000) a.setup = 'bulk';
  if (a.rate < 1 || a.duration < 1) throw new Error('--rate and --duration must be >= 1');
  if (a.shape === 'spike') a.duration = 1;
  if (a.shape === 'window' && (a.duration > 60 || !Number.isInteger(a.duration))) throw new Error('--shape window takes a whole --duration of at most 60 s');
  return a;
}

const log = (s: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const round = (n: number, d = 1) => (Number.isFinite(n) ? Number(n.toFixed(d)) : null);

/** Accounting of the deliveries of one schedule: R timers x every second of [from, to). */
class Collector {
  readonly seen = new Map<string, number>();
  readonly lateness: number[] = [];
  readonly perSecond: number[][];
  early = 0;
  outside = 0;
  received = 0;
  lastAt = 0;
  intervalLate: number[] = [];

  constructor(
    readonly from: number,
    readonly to: number,
    readonly rate: number,
  ) {
    this.perSecond = Array.from({ length: Math.ceil((to - from) / 1000) }, () => []);
  }

  add(d: Delivery): void {
    this.received++;
    this.lastAt = d.receivedAt;
    if (!(d.scheduledAt >= this.from && d.scheduledAt < this.to)) {
      this.outside++;
      return;
    }
    const n = this.seen.get(d.fireId) ?? 0;
    this.seen.set(d.fireId, n + 1);
    if (n > 0) return;
    const late = d.receivedAt - d.scheduledAt;
    if (late < 0) this.early++;
    this.lateness.push(late);
    this.intervalLate.push(late);
    this.perSecond[Math.floor((d.scheduledAt - this.from) / 1000)].push(late);
  }

  get expected(): number {
    return this.rate * this.perSecond.length;
  }
  get delivered(): number {
    return this.seen.size;
  }
  get duplicates(): number {
    let n = 0;
    for (const c of this.seen.values()) n += c - 1;
    return n;
  }

  result(): RunResult {
    return {
      rate_per_s: this.rate,
      window_s: this.perSecond.length,
      expected: this.expected,
      delivered: this.delivered,
      missed: this.expected - this.delivered,
      duplicates: this.duplicates,
      early: this.early,
      delivered_per_s: round(this.delivered / this.perSecond.length),
      lateness_ms: roundP(percentiles(this.lateness)),
      // A spike's first seconds (every fire is due at one instant): how many went out within 2, 5 and 10 s of it.
      delivered_within_ms: Object.fromEntries([2_000, 5_000, 10_000].map((ms) => [ms, this.lateness.reduce((n, l) => (l <= ms ? n + 1 : n), 0)])),
      lateness_by_second: this.perSecond.map((l) => {
        const p = percentiles(l);
        // The first arrival tells a late start of a second's sends from a slow spread of them.
        return { n: l.length, min: l.length ? l.reduce((a, b) => (b < a ? b : a)) : null, p50: round(p.p50, 0), p99: round(p.p99, 0), max: round(p.max, 0) };
      }),
    };
  }
}

interface RunResult {
  rate_per_s: number;
  window_s: number;
  expected: number;
  delivered: number;
  missed: number;
  /** Ours: of the missed, fires whose task row is still pending when the run ends (behind, not dropped). */
  pending_at_end?: number;
  duplicates: number;
  early: number;
  delivered_per_s: number | null;
  lateness_ms: Record<keyof Percentiles, number | null>;
  /** Deliveries within 2, 5 and 10 s of their scheduled time. */
  delivered_within_ms?: Record<string, number>;
  lateness_by_second: { n: number; min: number | null; p50: number | null; p99: number | null; max: number | null }[];
  cpu_s_by_role?: Record<string, number>;
  cpu_s_by_server?: Record<string, number>;
  /** Every delivery the receiver got while this system was measured (the window's and any other). */
  received?: number;
  /** Resident MB of each process every MEMORY_EVERY_MS of the window, from its start. */
  memory_mb?: MemorySample[];
  /** V8 heap in use (MB) of each role, sampled with memory_mb. */
  heap_mb?: MemorySample[];
  notes?: string[];
}

const roundP = (p: Percentiles) => ({ p50: round(p.p50), p95: round(p.p95), p99: round(p.p99), max: round(p.max) });

/**
 * PIDs of the shared servers on this machine, for CPU accounting (MariaDB, Redis, the Pulsar JVM).
 * The oldest process of each: a server's short-lived fork (Redis's AOF rewrite child starts as
 * `redis-server` too) must not stand for it, or its CPU vanishes from the run when the child exits.
 */
function serverPids(): Record<string, number> {
  const out: Record<string, { pid: number; started: number }> = {};
  const keep = (name: string, pid: number) => {
    const started = procStartTicks(pid);
    if (started !== undefined && (out[name] === undefined || started < out[name].started)) out[name] = { pid, started };
  };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (comm === 'mariadbd' || comm === 'mysqld') keep('mariadb', Number(entry));
      else if (comm === 'redis-server') keep('redis', Number(entry));
      else if (comm === 'java' && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('PulsarStandaloneStarter')) keep('pulsar', Number(entry));
    } catch {
      // gone
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.pid]));
}

/** When the process started, in clock ticks since boot (/proc/<pid>/stat field 22). */
function procStartTicks(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]);
  } catch {
    return undefined;
  }
}

class CpuMeter {
  private readonly start: Record<string, number> = {};
  constructor(private readonly sources: () => Record<string, number | undefined>) {
    Object.assign(this.start, this.read());
  }
  read(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(this.sources())) if (v !== undefined) out[k] = v;
    return out;
  }
  since(): Record<string, number> {
    const now = this.read();
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(now)) out[k] = Number((v - (this.start[k] ?? 0)).toFixed(2));
    return out;
  }
}

/** How often the memory of the processes is sampled, and the start-up period growth is measured after. */
const MEMORY_EVERY_MS = 10_000;
const MEMORY_SETTLED_S = 300;

/** Resident set of a process in MB (Linux /proc), undefined when it is gone. */
function rssMb(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 102.4) / 10 : undefined;
  } catch {
    return undefined;
  }
}

/** V8 heap in use of a role (prom-client's `nodejs_heap_size_used_bytes` on its /metrics), in MB. */
async function heapUsedMb(port: number): Promise<number | undefined> {
  try {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2000) }).then((r) => r.text());
    const m = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(text);
    return m ? Math.round(Number(m[1]) / 104_857.6) / 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Samples each process's resident memory, and each role's V8 heap in use, every MEMORY_EVERY_MS until
 * stopped. The heap tells a leak (live objects grow) from V8 or the allocator keeping more pages
 * (resident grows, the heap in use does not).
 */
class MemorySampler {
  readonly rss: MemorySample[] = [];
  readonly heap: MemorySample[] = [];
  private readonly t0 = Date.now();
  private readonly timer: NodeJS.Timeout;
  private heapRead: Promise<void> = Promise.resolve();
  constructor(
    private readonly pids: () => Record<string, number | undefined>,
    private readonly heapPorts: Record<string, number>,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), MEMORY_EVERY_MS);
  }
  async stop(): Promise<{ rss: MemorySample[]; heap: MemorySample[] }> {
    clearInterval(this.timer);
    this.sample();
    await this.heapRead;
    return { rss: this.rss, heap: this.heap };
  }
  private sample(): void {
    const t_s = Math.round((Date.now() - this.t0) / 1000);
    const mb: Record<string, number> = {};
    for (const [k, pid] of Object.entries(this.pids())) {
      const v = rssMb(pid);
      if (v !== undefined) mb[k] = v;
    }
    this.rss.push({ t_s, mb });
    this.heapRead = this.heapRead.then(async () => {
      const entries = await Promise.all(Object.entries(this.heapPorts).map(async ([k, port]) => [k, await heapUsedMb(port)] as const));
      const heap: Record<string, number> = {};
      for (const [k, v] of entries) if (v !== undefined) heap[k] = v;
      this.heap.push({ t_s, mb: heap });
    });
  }
}

const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * How long a system may take to deliver its window's rest after the window, and how long it may stay
 * silent meanwhile. A spike is R fires at one instant: a sender may spend seconds just starting them.
 */
function settle(args: Args, everySecondMs: number): [maxSettleMs: number, maxSilenceMs: number] {
  return args.shape === 'spike' ? [180_000, 15_000] : [everySecondMs, 3000];
}

/**
 * Logs progress every 2 s until `until`, then waits for the window's missing deliveries while they keep coming:
 * at most `maxSettleMs`, and no longer than `maxSilenceMs` without one. Silence counts from `until` at
 * the earliest: deliveries before the window (warm-up) must not end the wait before its first one.
 */
async function watch(label: string, c: Collector, until: number, maxSettleMs: number, maxSilenceMs = 3000): Promise<void> {
  let last = c.received;
  let lastT = Date.now();
  const tick = () => {
    const now = Date.now();
    const due = Math.max(0, Math.min(c.perSecond.length, Math.floor((now - 500 - c.from) / 1000))) * c.rate;
    const p = percentiles(c.intervalLate);
    c.intervalLate = [];
    log(
      `${label}: ${Math.round(((c.received - last) * 1000) / (now - lastT))}/s received, window ${c.delivered}/${c.expected} delivered, ` +
        `behind ${Math.max(0, due - c.delivered)}, dup ${c.duplicates}, lateness p50 ${round(p.p50, 0)} p99 ${round(p.p99, 0)} ms, load ${loadavg()[0].toFixed(2)}`,
    );
    last = c.received;
    lastT = now;
  };
  while (Date.now() < until) {
    await sleep(Math.min(2000, until - Date.now()));
    tick();
  }
  const deadline = Date.now() + maxSettleMs;
  while (c.delivered < c.expected && Date.now() < deadline && Date.now() - Math.max(c.lastAt, until) < maxSilenceMs) {
    await sleep(1000);
  }
  await sleep(2000);
  tick();
}

/** How long before the window the bench does its own set-up work: the middle of the second before it. */
const QUIET_OFFSET_MS = 600;

/** A spike is preceded by SPIKE_WARM_SHARE of its fires SPIKE_WARM_MS before it (not counted). */
const SPIKE_WARM_MS = 10_000;
const spikeWarmCount = (args: Args) => (args.shape === 'every-second' ? 0 : Math.ceil(args.rate / 10));
/** The shapes whose fires exist only at a chosen minute (a spike, a window), each with a warm tenth before. */
const atMinute = (args: Args) => args.shape !== 'every-second';

/** Spike: the first whole minute at least 90 s (start-up and expansion) and the warm-up from now. */
function spikeMinute(args: Args): number {
  return Math.ceil((Date.now() + Math.max(90_000, args.warmup * 1000)) / 60_000) * 60_000;
}

/**
 * `tasks.outcome`'s values, open (0) first (libs/dal's OPEN_OUTCOME and FINISHED_TASK_STATUSES; not
 * imported: the bench's forked children do not resolve the libs' path aliases).
 */
const TASK_OUTCOMES = [0, 2, 3, 4] as const;

/** BENCH_TRACE: deliveries, lateness, rows and CPU per role every TRACE_EVERY_MS from the roles' start. */
const TRACE_EVERY_MS = 5000;
class StartupTrace {
  private late: number[] = [];
  private oldest = Infinity;
  private readonly t0 = Date.now();
  private readonly timer: NodeJS.Timeout;
  private last: Record<string, number>;
  constructor(
    private readonly stack: Stack,
    private readonly servers: Record<string, number>,
  ) {
    this.last = this.cpu();
    this.timer = setInterval(() => void this.tick(), TRACE_EVERY_MS);
  }
  add(d: Delivery): void {
    this.late.push(d.receivedAt - d.scheduledAt);
    if (d.scheduledAt < this.oldest) this.oldest = d.scheduledAt;
  }
  stop(): void {
    clearInterval(this.timer);
  }
  private cpu(): Record<string, number> {
    return { ...this.stack.cpuSeconds(), ...Object.fromEntries(Object.entries(this.servers).map(([k, pid]) => [k, procCpuSeconds(pid) ?? 0])) };
  }
  private async tick(): Promise<void> {
    const now = this.cpu();
    const used = Object.entries(now)
      .map(([k, v]) => `${k} ${(v - (this.last[k] ?? 0)).toFixed(1)}`)
      .join(', ');
    this.last = now;
    const p = percentiles(this.late);
    const n = this.late.length;
    const oldest = Number.isFinite(this.oldest) ? new Date(this.oldest).toISOString().slice(11, 19) : '-';
    this.late = [];
    this.oldest = Infinity;
    // The last open fire (the end of idx_outcome_run_at's open range): how far ahead the fires exist.
    const [ahead] = await this.stack.sql<{ at: number | null }>('SELECT MAX(run_at) AS at FROM tasks WHERE outcome = ?', [TASK_OUTCOMES[0]]).catch(() => [{ at: null }]);
    const until = ahead.at === null ? '-' : `${Math.round((Number(ahead.at) - Date.now()) / 1000)} s`;
    log(
      `trace +${Math.round((Date.now() - this.t0) / 1000)} s: ${Math.round((n * 1000) / TRACE_EVERY_MS)} delivered/s, lateness p50 ${round(p.p50, 0)} p99 ${round(p.p99, 0)} ms, ` +
        `oldest scheduled ${oldest}, fires exist until now + ${until}; CPU s: ${used}`,
    );
  }
}

async function runOurs(args: Args, receiver: Receiver, onDelivery: { fn?: (d: Delivery) => void }): Promise<RunResult> {
  const notes: string[] = [];
  const spikeAt = atMinute(args) ? spikeMinute(args) : null;
  // An hourly cron at the spike's minute: the top-of-hour shape, an hour from the next one (a window:
  // each second of its first --duration seconds).
  const seconds = args.shape === 'window' ? `0-${args.duration - 1}` : '0';
  const cron = spikeAt === null ? '* * * * * *' : `${seconds} ${new Date(spikeAt).getUTCMinutes()} * * * *`;
  const warmCron = spikeAt === null ? '' : `${60 - SPIKE_WARM_MS / 1000} ${new Date(spikeAt - 60_000).getUTCMinutes()} * * * *`;
  const timers = Array.from({ length: args.rate + spikeWarmCount(args) }, (_, k) => ({ name: `t${k}`, cron: k < args.rate ? cron : warmCron }));
  const hook = { url: receiver.url('/ours'), method: 'POST', body: '{"bench":true}' };
  const app = 'bench';
  log(`ours: starting the stack (setup ${args.setup}, window ${args.windowMinutes} min)`);
  const stack = await Stack.start({
    id: shortId('bench'),
    env: { TIMER_WINDOW_MINUTES: String(args.windowMinutes), TIMER_LOG_LEVEL: 'warn', ...tuning() },
    replicas: { executor: args.executors },
    beforeRoles:
      args.setup === 'bulk'
        ? async (s) => {
            const t0 = Date.now();
            await s.sql('INSERT IGNORE INTO apps (app) VALUES (?)', [app]);
            for (let i = 0; i < timers.length; i += 1000) {
              const rows = timers.slice(i, i + 1000).map((t) => [app, t.name, t.name, t.cron, 'UTC', JSON.stringify(hook), 2]);
              await s.sql('INSERT INTO timers (app, name, live_name, cron, time_zone, notify_http_param, status) VALUES ?', [rows]);
            }
            notes.push(`bulk-inserted ${args.rate} enabled timers in ${Date.now() - t0} ms; the migrator expanded them`);
          }
        : undefined,
  });
  const trace = process.env.BENCH_TRACE ? new StartupTrace(stack, serverPids()) : undefined;
  if (trace) onDelivery.fn = (d) => trace.add(d);
  try {
    log(`ours: roles healthy (logs in ${stack.logDir})`);
    if (args.setup === 'api') {
      const t0 = Date.now();
      let next = 0;
      let done = 0;
      const worker = async () => {
        for (;;) {
          const t = timers[next++];
          if (!t) return;
          await stack.api.createEnabled({ app, name: t.name, cron: t.cron, notifyHTTPParam: hook });
          if (++done % 500 === 0) log(`ours: ${done}/${timers.length} timers created and enabled`);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      const ms = Date.now() - t0;
      notes.push(`created+enabled ${timers.length} timers through the API in ${ms} ms (${Math.round((timers.length * 1000) / ms)} timers/s, 16 concurrent clients)`);
      log(`ours: ${notes[notes.length - 1]}`);
    }
    // Wait until the fires of the whole window exist (enable pre-creates them; bulk: the migrator).
    let from = 0;
    let to = 0;
    const ready = Date.now() + 300_000;
    for (;;) {
      from = spikeAt ?? nextSecond(args.warmup * 1000);
      to = from + args.duration * 1000;
      if (spikeAt !== null && Date.now() > spikeAt - 2000) throw new Error(`the ${args.shape}'s fires were not created 2 s before it`);
      // By index (outcome, run_at): a count by run_at alone scanned every fire row every 3 s of the wait
      // (~1 M rows at 5,000/s), MariaDB's CPU taken from the fires being delivered meanwhile.
      const count = (runAt: number) => stack.sql<{ n: number }>(`SELECT COUNT(*) AS n FROM tasks WHERE outcome IN (${TASK_OUTCOMES.join(', ')}) AND run_at = ?`, [runAt]);
      const [a] = await count(from);
      // A window longer than the migrator's horizon (a soak) is created as it goes: its start must exist.
      const last = args.duration * 1000 > 2 * args.windowMinutes * 60_000 ? from : to - 1000;
      const [b] = await count(last);
      if (Number(a.n) >= args.rate && Number(b.n) >= args.rate) break;
      if (Date.now() > ready) throw new Error(`fires of the window not created within 5 min (${a.n}/${b.n} of ${args.rate})`);
      log(`ours: waiting for the fires of the window to exist (${a.n} and ${b.n} of ${args.rate})`);
      await sleep(3000);
    }
    const c = new Collector(from, to, args.rate);
    onDelivery.fn = trace
      ? (d) => {
          trace.add(d);
          c.add(d);
        }
      : (d) => c.add(d);
    // The bench's own work (a scan of /proc, the roles' /metrics for their heaps, every 10 s after) runs
    // in the receiver's process and asks the executor for its metrics: in the quiet middle of a second,
    // not at an instant. At from - 100 ms it landed on the window's first burst, ours' worst second in
    // most 1,000/s runs (the receiver's CPU in its first 200 ms 100-130 ms, ~75 in later seconds).
    await sleepUntil(from - QUIET_OFFSET_MS);
    const servers = serverPids();
    const memory = new MemorySampler(() => ({ ...Object.fromEntries(ROLES.map((r) => [r, stack.pid(r)])), ...servers }), Object.fromEntries(ROLES.map((r) => [r, stack.port(r)])));
    await sleepUntil(from - 100);
    const cpu = new CpuMeter(() => ({ ...stack.cpuSeconds(), receiver: selfCpu() }));
    const receivedBefore = c.received;
    const srvCpu = new CpuMeter(() => Object.fromEntries(Object.entries(servers).map(([k, pid]) => [k, procCpuSeconds(pid)])));
    log(`ours: measuring ${args.rate} fires/s from ${new Date(from).toISOString()} for ${args.duration} s`);
    await watch('ours', c, to + 500, ...settle(args, 60_000));
    const res = c.result();
    res.cpu_s_by_role = cpu.since();
    res.received = c.received - receivedBefore; // over the same span as the CPU
    res.cpu_s_by_server = srvCpu.since();
    const mem = await memory.stop();
    res.memory_mb = mem.rss;
    res.heap_mb = mem.heap;
    res.notes = notes;
    // Where the time goes: the executor's own numbers (records), and the broker topics.
    const [rec] = await stack.sql<Record<string, number>>(
      'SELECT COUNT(*) AS n, AVG(lateness_ms) AS avg_late, MAX(lateness_ms) AS max_late, AVG(cost_ms) AS avg_cost, SUM(status = 2) AS ok, SUM(status = 4) AS missed, SUM(status = 0) AS pending FROM tasks WHERE run_at >= ? AND run_at < ?',
      [from, to],
    );
    if (Number(rec.pending) > 0) res.pending_at_end = Number(rec.pending);
    if (process.env.BENCH_EXPLAIN) {
      const late = await stack.sql<Record<string, unknown>>('SELECT * FROM tasks WHERE run_at >= ? AND run_at < ? ORDER BY lateness_ms DESC LIMIT 5', [from, to]);
      log(`explain: latest rows: ${JSON.stringify(late)}`);
      const pend = await stack.sql<Record<string, unknown>>('SELECT * FROM tasks WHERE run_at >= ? AND run_at < ? AND status = 0 LIMIT 3', [from, to]);
      log(`explain: pending rows: ${JSON.stringify(pend)}`);
      const hist = await stack.sql<Record<string, unknown>>('SELECT (run_at - ?) DIV 1000 AS sec, COUNT(*) AS n, AVG(lateness_ms) AS late, SUM(status=0) AS pending FROM tasks WHERE run_at >= ? AND run_at < ? GROUP BY 1', [from, from, to]);
      log(`explain: per second: ${JSON.stringify(hist)}`);
      for (const role of ['executor', 'trigger'] as const) log(`explain: ${role} metrics: ${(await fetch(`http://127.0.0.1:${stack.port(role)}/metrics`).then((r) => r.text()).catch((e) => String(e))).split('\n').filter((l) => /^timer_/.test(l)).join(' | ')}`);
    }
    notes.push(`task records of the window: ${JSON.stringify(Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, v === null ? null : Number(v)])))}`);
    onDelivery.fn = undefined;
    return res;
  } finally {
    trace?.stop();
    log('ours: stopping the stack');
    await stack.stop();
  }
}

/**
 * Role settings given to the benchmark (e.g. `TIMER_EXECUTOR_CONCURRENCY=1000 npm run bench`) reach
 * the roles it starts; where the servers are is the stack's own business.
 */
function tuning(): Record<string, string> {
  const infra = /^TIMER_(MYSQL_URL|REDIS_URL|REDIS_KEY_PREFIX|PULSAR_URL|PULSAR_TENANT|PULSAR_NAMESPACE|HTTP_PORT|HTTP_HOST)$/;
  return Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('TIMER_') && !e[0].startsWith('TIMER_LOCAL_') && !infra.test(e[0]) && e[1] !== undefined),
  );
}

async function runBullmq(args: Args, receiver: Receiver, onDelivery: { fn?: (d: Delivery) => void }): Promise<RunResult> {
  const redisUrl = infra().redisUrl;
  const prefix = `bull-${shortId('b')}`;
  const queueName = 'fires';
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const { Queue } = loadBullmq(ROOT);
  const queue = new Queue(queueName, { connection, prefix });
  const workers: ChildProcess[] = [];
  const notes: string[] = [];
  try {
    const total = args.rate * args.duration;
    const estimateMs = Math.ceil(total / 10) + 3000; // ~10k jobs/s when adding in bulk
    const from = nextSecond(Math.max(args.warmup * 1000, estimateMs) + (atMinute(args) ? SPIKE_WARM_MS + 2000 : 0));
    const to = from + args.duration * 1000;
    log(`bullmq: adding ${total} delayed jobs (one per fire) under prefix ${prefix}`);
    const t0 = Date.now();
    for (let s = from; s < to; s += 1000) {
      for (let i = 0; i < args.rate; i += 1000) {
        const jobs = [];
        for (let k = i; k < Math.min(args.rate, i + 1000); k++) {
          jobs.push({ name: 'fire', data: { timerId: `b${k}`, runAt: s }, opts: { jobId: `b${k}-${s}`, delay: Math.max(0, s - Date.now()), removeOnComplete: true, removeOnFail: true } });
        }
        await queue.addBulk(jobs);
      }
    }
    const warmAt = from - SPIKE_WARM_MS;
    for (let i = 0; i < spikeWarmCount(args); i += 1000) {
      const jobs = [];
      for (let k = i; k < Math.min(spikeWarmCount(args), i + 1000); k++) {
        jobs.push({ name: 'fire', data: { timerId: `w${k}`, runAt: warmAt }, opts: { jobId: `w${k}-${warmAt}`, delay: Math.max(0, warmAt - Date.now()), removeOnComplete: true, removeOnFail: true } });
      }
      await queue.addBulk(jobs);
    }
    const addMs = Date.now() - t0;
    notes.push(`added ${total} delayed jobs in ${addMs} ms (${Math.round((total * 1000) / addMs)} jobs/s)`);
    if (Date.now() > from) notes.push(`adding overran the window start by ${Date.now() - from} ms: the first fires were late from the start`);
    log(`bullmq: ${notes.join('; ')}`);
    for (let w = 0; w < args.bullmqWorkers; w++) {
      workers.push(fork(__filename, ['--as', 'bullmq-worker', redisUrl, prefix, queueName, String(args.bullmqConcurrency), receiver.url('/bullmq')], { stdio: 'inherit' }));
    }
    const c = new Collector(from, to, args.rate);
    onDelivery.fn = (d) => c.add(d);
    await sleepUntil(from - QUIET_OFFSET_MS);
    const servers = serverPids();
    await sleepUntil(from - 100);
    const cpu = new CpuMeter(() => ({ ...Object.fromEntries(workers.map((w, i) => [`bullmq-worker-${i}`, procCpuSeconds(w.pid)])), receiver: selfCpu() }));
    const receivedBefore = c.received;
    const srvCpu = new CpuMeter(() => Object.fromEntries(Object.entries(servers).map(([k, pid]) => [k, procCpuSeconds(pid)])));
    log(`bullmq: measuring ${args.rate} fires/s from ${new Date(from).toISOString()} for ${args.duration} s (${args.bullmqWorkers} workers x concurrency ${args.bullmqConcurrency})`);
    await watch('bullmq', c, to + 500, ...settle(args, 60_000));
    const res = c.result();
    res.cpu_s_by_role = cpu.since();
    res.received = c.received - receivedBefore; // over the same span as the CPU
    res.cpu_s_by_server = srvCpu.since();
    res.notes = notes;
    onDelivery.fn = undefined;
    return res;
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    connection.disconnect();
  }
}

async function runCeiling(args: Args, receiver: Receiver): Promise<{ rate_per_s: number; connections: number; seconds: number }> {
  const connections = 64;
  const child = fork(__filename, ['--as', 'ceiling', receiver.url('/ceiling'), String(args.ceilingSeconds + 1), String(connections)], { stdio: 'inherit' });
  await sleep(1000); // let it connect
  const start = receiver.requests;
  const t0 = Date.now();
  await sleep(args.ceilingSeconds * 1000);
  const n = receiver.requests - start;
  const secs = (Date.now() - t0) / 1000;
  await new Promise((r) => child.once('exit', r));
  return { rate_per_s: Math.round(n / secs), connections, seconds: args.ceilingSeconds };
}

/**
 * The same schedule sent by a bare process (no queue, no store): at each whole second of the window it
 * starts R requests at once over as many keep-alive connections as the executor uses by default. Its
 * lateness is what the machine allows any single sender of this schedule.
 */
async function runBurst(args: Args, receiver: Receiver, onDelivery: { fn?: (d: Delivery) => void }): Promise<RunResult> {
  const connections = 256;
  const from = nextSecond(atMinute(args) ? SPIKE_WARM_MS + 2000 : 6000);
  const to = from + args.duration * 1000;
  const c = new Collector(from, to, args.rate);
  onDelivery.fn = (d) => c.add(d);
  // Three bursts before the window warm the sender up, as a running executor is (they are not counted);
  // not before a spike: R requests in flight at once would still be queued when it starts.
  const warm = args.shape === 'spike' ? 0 : 3000;
  const child = fork(
    __filename,
    ['--as', 'burst', receiver.url('/burst'), String(from - warm), String(to), String(args.rate), String(connections), String(from - SPIKE_WARM_MS), String(spikeWarmCount(args))],
    { stdio: 'inherit' },
  );
  try {
    await sleepUntil(from - 100);
    const cpu = new CpuMeter(() => ({ sender: procCpuSeconds(child.pid), receiver: selfCpu() }));
    const receivedBefore = c.received;
    log(`burst: a bare sender, ${args.rate} requests at each whole second for ${args.duration} s`);
    await watch('burst', c, to + 500, ...settle(args, 30_000));
    const res = c.result();
    res.cpu_s_by_role = cpu.since();
    res.received = c.received - receivedBefore; // over the same span as the CPU
    res.notes = [`one process, undici, ${connections} keep-alive connections`];
    return res;
  } finally {
    onDelivery.fn = undefined;
    child.kill('SIGTERM');
  }
}

// ---- child processes -------------------------------------------------------------------------

async function burstSender(url: string, from: number, to: number, rate: number, connections: number, warmAt: number, warmCount: number): Promise<void> {
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });
  const one = async (k: number, at: number) => {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      body: '{"bench":true}',
      headers: { 'x-timer-id': `c${k}`, 'x-timer-fire-id': `c${k}-${at}`, 'x-timer-scheduled-at': String(at), 'x-timer-attempt': '1' },
    });
    await res.body.dump();
  };
  const sent: Promise<unknown>[] = [];
  if (warmCount > 0) {
    await sleepUntil(warmAt);
    for (let k = 0; k < warmCount; k++) sent.push(one(k, warmAt).catch(() => undefined));
  }
  for (let at = from; at < to; at += 1000) {
    await sleepUntil(at);
    for (let k = 0; k < rate; k++) sent.push(one(k, at).catch(() => undefined));
  }
  await Promise.all(sent);
  await agent.close();
}

async function bullmqWorker(redisUrl: string, prefix: string, queueName: string, concurrency: number, url: string): Promise<void> {
  const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const { Worker } = loadBullmq(ROOT);
  const worker = new Worker(
    queueName,
    async (job) => {
      const { timerId, runAt } = job.data as { timerId: string; runAt: number };
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        body: '{"bench":true}',
        headers: {
          'x-timer-id': timerId,
          'x-timer-fire-id': `${timerId}-${runAt}`,
          'x-timer-scheduled-at': String(runAt),
          'x-timer-attempt': String(job.attemptsMade + 1),
        },
      });
      await res.body.dump();
      if (res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}`);
    },
    { connection, prefix, concurrency, drainDelay: 1 },
  );
  process.once('SIGTERM', () => {
    void worker.close().finally(() => process.exit(0));
  });
}

async function ceilingLoop(url: string, seconds: number, connections: number): Promise<void> {
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });
  const end = Date.now() + seconds * 1000;
  const loop = async () => {
    while (Date.now() < end) {
      const res = await request(url, { method: 'POST', body: '{"bench":true}', dispatcher: agent });
      await res.body.dump();
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  await agent.close();
}

// ---- report ----------------------------------------------------------------------------------

function scheduleText(r: Record<string, unknown>): string {
  if (r.shape === 'spike') return `a spike: ${r.rate_per_s} fires due at one second (hourly timers at one minute, the top-of-hour shape)`;
  if (r.shape === 'window') return `${r.rate_per_s} fires/s due on whole seconds for ${r.duration_s} s and not before (ours: timers firing at each second of those seconds of one minute), a tenth of them 10 s before`;
  return `${r.rate_per_s} every-second timers (${r.rate_per_s} fires/s, due on whole seconds) for ${r.duration_s} s`;
}

function markdown(r: Record<string, unknown>, ours?: RunResult, bull?: RunResult, ceiling?: { rate_per_s: number }, burst?: RunResult): string {
  const row = (name: string, x?: RunResult) =>
    x
      ? `| ${name} | ${x.rate_per_s} | ${x.delivered_per_s} | ${x.expected} | ${x.delivered} | ${x.missed}${x.pending_at_end ? ` (${x.pending_at_end} still pending)` : ''} | ${x.duplicates} | ${x.early} | ${x.lateness_ms.p50} | ${x.lateness_ms.p95} | ${x.lateness_ms.p99} | ${x.lateness_ms.max} | ${Object.values(x.cpu_s_by_role ?? {}).reduce((a, b) => a + b, 0).toFixed(1)} |`
      : `| ${name} | not run | | | | | | | | | | | |`;
  const cpuTable = (x?: RunResult) =>
    x ? Object.entries({ ...x.cpu_s_by_role, ...x.cpu_s_by_server }).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ') : '';
  return [
    `# Pipeline benchmark ${r.timestamp}`,
    '',
    `${r.machine}; schedule: ${scheduleText(r)}; ours with ${r.executors} executor process(es), BullMQ with ${r.bullmq_workers} worker process(es).`,
    '',
    '| system | rate/s | delivered/s | expected | delivered | missed | duplicates | early | p50 ms | p95 ms | p99 ms | max ms | client CPU s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    row('ours', ours),
    row('bullmq', bull),
    `| ceiling (bare HTTP loop) | ${ceiling?.rate_per_s ?? 'not run'} | | | | | | | | | | | |`,
    row('burst ceiling (bare sender, same schedule)', burst),
    '',
    r.shape === 'spike'
      ? 'missed = expected - delivered by the end of the run (the spike, then until deliveries stop for 15 s or 180 s pass).'
      : 'missed = expected - delivered by the end of the run (the window, then until deliveries stop for 3 s or 60 s pass; the burst sender 30 s).',
    '',
    `CPU seconds during the window, ours: ${cpuTable(ours)}`,
    '',
    `CPU seconds during the window, bullmq: ${cpuTable(bull)}`,
    '',
    ...cpuPerFireLines(ours, bull),
    ...memoryLines(ours),
    ...(ours?.notes ?? []).map((n) => `- ours: ${n}`),
    ...(bull?.notes ?? []).map((n) => `- bullmq: ${n}`),
    '',
  ].join('\n');
}

/**
 * CPU per delivered fire: the CPU seconds of the system's own processes while it was measured, over
 * every delivery the receiver got meanwhile (catch-up fires outside the window cost CPU too). Ours:
 * its roles, MariaDB, Redis and the broker; BullMQ: its workers and Redis (MariaDB and the broker idle
 * then, and are not BullMQ's). The receiver is excluded from both.
 */
function cpuPerFireMs(x: RunResult | undefined, servers: string[]): number | null {
  if (!x?.received) return null;
  const roles = Object.entries(x.cpu_s_by_role ?? {}).filter(([k]) => k !== 'receiver').reduce((a, [, v]) => a + v, 0);
  const srv = servers.reduce((a, k) => a + (x.cpu_s_by_server?.[k] ?? 0), 0);
  return ((roles + srv) * 1000) / x.received;
}

function cpuPerFireLines(ours?: RunResult, bull?: RunResult): string[] {
  const o = cpuPerFireMs(ours, ['mariadb', 'redis', 'pulsar']);
  const b = cpuPerFireMs(bull, ['redis']);
  if (o === null && b === null) return [];
  const f = (v: number | null, x?: RunResult) => (v === null ? 'not measured' : `${v.toFixed(3)} ms (${x?.received} deliveries while measured)`);
  return [`CPU per delivered fire (receiver excluded): ours ${f(o, ours)}, BullMQ ${f(b, bull)}${o !== null && b !== null ? `; ours / BullMQ = ${(o / b).toFixed(2)}` : ''}`, ''];
}

function memoryLines(ours?: RunResult): string[] {
  const samples = ours?.memory_mb ?? [];
  if (samples.length === 0) return [];
  const first = samples[0].mb;
  const lastS = samples[samples.length - 1];
  const lines = [`Resident memory, ours (MB, window start -> ${lastS.t_s} s): ${Object.entries(lastS.mb).map(([k, v]) => `${k} ${first[k] ?? '?'} -> ${v}`).join(', ')}`, ''];
  for (const [what, series] of [['resident memory', samples], ['V8 heap in use', ours?.heap_mb ?? []]] as const) {
    const growth = memoryGrowth(series, MEMORY_SETTLED_S);
    if (!growth) continue;
    const [s0, s1] = growth.settled_s;
    const [e0, e1] = growth.end_s;
    lines.push(
      `Growth of ${what} after the first ${MEMORY_SETTLED_S} s, median of (${e0}, ${e1}] s vs median of [${s0}, ${s1}) s ` +
        `(peak: largest sample after ${MEMORY_SETTLED_S} s vs the one at it): ` +
        Object.entries(growth.by_process)
          .map(([k, g]) => `${k} ${g.settled_mb} -> ${g.end_mb} MB (${g.growth_pct} %; peak ${g.at_settled_mb} -> ${g.peak_mb}, ${g.peak_growth_pct} %)`)
          .join(', '),
      '',
    );
  }
  return lines;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--as') {
    if (argv[1] === 'bullmq-worker') return bullmqWorker(argv[2], argv[3], argv[4], Number(argv[5]), argv[6]);
    if (argv[1] === 'ceiling') return ceilingLoop(argv[2], Number(argv[3]), Number(argv[4]));
    if (argv[1] === 'burst') return burstSender(argv[2], Number(argv[3]), Number(argv[4]), Number(argv[5]), Number(argv[6]), Number(argv[7]), Number(argv[8]));
    throw new Error(`unknown child ${argv[1]}`);
  }
  const args = parseArgs(argv);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const hooks: { fn?: (d: Delivery) => void } = {};
  const receiver = await Receiver.start({ record: false, onDelivery: (d) => hooks.fn?.(d) });
  log(`receiver on ${receiver.url()}; rate ${args.rate}/s, duration ${args.duration} s, ${cpus().length} cores, load ${loadavg()[0].toFixed(2)}`);
  let ours: RunResult | undefined;
  let bull: RunResult | undefined;
  let ceiling: { rate_per_s: number; connections: number; seconds: number } | undefined;
  let burst: RunResult | undefined;
  const errors: string[] = [];
  try {
    if (!args.skip.has('ours')) ours = await runOurs(args, receiver, hooks).catch((e: Error) => (errors.push(`ours: ${e.message}`), undefined));
    if (!args.skip.has('bullmq')) bull = await runBullmq(args, receiver, hooks).catch((e: Error) => (errors.push(`bullmq: ${e.message}`), undefined));
    if (!args.skip.has('ceiling')) ceiling = await runCeiling(args, receiver);
    if (!args.skip.has('burst')) burst = await runBurst(args, receiver, hooks).catch((e: Error) => (errors.push(`burst: ${e.message}`), undefined));
  } finally {
    await receiver.close();
  }
  const strip = (x?: RunResult) => x && { ...x, lateness_by_second: x.lateness_by_second };
  const result = {
    timestamp: stamp,
    machine: `${cpus().length} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}`,
    rate_per_s: args.rate,
    duration_s: args.duration,
    shape: args.shape,
    setup: args.setup,
    window_minutes: args.windowMinutes,
    executors: args.executors,
    bullmq_workers: args.bullmqWorkers,
    ...(ours ?? {}),
    peers: { bullmq: strip(bull) ?? null, ceiling: ceiling ?? null, burst: strip(burst) ?? null },
    errors,
  };
  mkdirSync(RESULTS, { recursive: true });
  const base = join(RESULTS, `pipeline-${stamp}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown(result, ours, bull, ceiling, burst));
  const series = [];
  if (ours) {
    series.push({ label: 'ours p50', color: [30, 90, 200] as [number, number, number], values: ours.lateness_by_second.map((s) => s.p50 ?? NaN) });
    series.push({ label: 'ours p99', color: [200, 40, 40] as [number, number, number], values: ours.lateness_by_second.map((s) => s.p99 ?? NaN) });
  }
  if (bull) {
    series.push({ label: 'bullmq p50', color: [30, 150, 60] as [number, number, number], values: bull.lateness_by_second.map((s) => s.p50 ?? NaN), dashed: true });
    series.push({ label: 'bullmq p99', color: [220, 130, 0] as [number, number, number], values: bull.lateness_by_second.map((s) => s.p99 ?? NaN), dashed: true });
  }
  if (burst) {
    series.push({ label: 'burst ceiling p99', color: [120, 120, 120] as [number, number, number], values: burst.lateness_by_second.map((s) => s.p99 ?? NaN), dashed: true });
  }
  drawLineChart(`${base}.png`, `lateness per second at ${args.rate}/s`, 'second of the window', 'ms', series);
  const charts: string[] = [];
  const palette: [number, number, number][] = [[30, 90, 200], [200, 40, 40], [30, 150, 60], [220, 130, 0], [120, 60, 160], [0, 150, 150], [120, 120, 120], [180, 100, 60]];
  for (const [suffix, what, mem] of [['memory', 'resident memory', ours?.memory_mb ?? []], ['heap', 'V8 heap in use', ours?.heap_mb ?? []]] as const) {
    if (mem.length < 2) continue;
    const names = Object.keys(mem[mem.length - 1].mb);
    // One x step per sample (MEMORY_EVERY_MS): the chart's x axis is in samples, labelled in its title.
    const memSeries = names.map((k, i) => ({ label: k, color: palette[i % palette.length], values: mem.map((m) => m.mb[k] ?? NaN) }));
    drawLineChart(`${base}-${suffix}.png`, `${what} at ${args.rate}/s, one sample per ${MEMORY_EVERY_MS / 1000} s`, `sample (${MEMORY_EVERY_MS / 1000} s each)`, 'MB', memSeries);
    charts.push(`-${suffix}.png`);
  }
  log(`wrote ${base}.json, .md, .png${charts.map((c) => `, ${c}`).join('')}`);
  process.stdout.write(markdown(result, ours, bull, ceiling, burst));
  if (errors.length) {
    process.stderr.write(`errors:\n${errors.join('\n')}\n`);
    process.exitCode = 1;
  }
  // A system's run that threw leaves its progress timer and clients behind: exit rather than hang.
  process.exit();
}

main().catch((e: unknown) => {
  process.stderr.write(`pipeline bench: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
