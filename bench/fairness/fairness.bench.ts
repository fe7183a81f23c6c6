/**
 * Fairness benchmark (a command, not a test): one app's slow callbacks against another app's lateness.
 *
 *   npm run bench:fairness -- [--slow-timers 500] [--fast-timers 100] [--slow-ms 5000] [--alone-seconds 40]
 *                             [--together-seconds 60] [--executor-concurrency 1000]
 *
 * Before the roles start (Stack `beforeRoles`, fresh database) it inserts app B's --fast-timers
 * every-second timers calling a receiver that answers at once, and app A's --slow-timers every-second
 * timers calling a receiver that answers after --slow-ms (their own callback timeout is twice that,
 * so A's calls succeed: slow, not failing, and no circuit opens). A's timers start (`start_at`) after
 * B has run alone for --alone-seconds; then both run for --together-seconds. Measured at the
 * receivers: B's lateness (receive - X-Timer-Scheduled-At) p50/p99/max alone and with A present, side
 * by side in the same run, and A's deliveries. Target (issue 15): B's p99 with A at most 1.5x alone.
 * Writes .local/results/fairness-<time>.json and .md, and prints progress every 5 s. BENCH_DIAG=1 runs the
 * executor with TIMER_EXECUTOR_DIAG_INSTANTS (a log line per instant in its log; it costs the executor a little).
 */
import { cpus } from 'node:os';
import { Delivery, markdownTable, metricBy, nextSecond, numericFlags, percentiles, procCpuSeconds, Receiver, scrapeMetrics, shortId, sleep, sleepUntil, Stack, writeResults } from '../../e2e/support';

const SLOW_APP = 'fair-a';
const FAST_APP = 'fair-b';
const TARGET_RATIO = 1.5;
const DEFAULTS = { slowTimers: 500, fastTimers: 100, slowMs: 5_000, aloneSeconds: 40, togetherSeconds: 60, executorConcurrency: 1_000 };
type Args = typeof DEFAULTS;

const log = (s: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const r1 = (n: number) => (Number.isFinite(n) ? Math.round(n) : null);

/** Width of the report's windows of B's lateness (seconds). */
const WINDOW_S = 5;

/** First deliveries per fire, split into the two measured phases by scheduled time. */
class Phases {
  readonly seen = new Set<string>();
  readonly alone: number[] = [];
  readonly together: number[] = [];
  /** B's lateness by scheduled second relative to A's start (-5 to the end of the together phase): where the excess is. */
  readonly bySecond = new Map<number, number[]>();
  /** B's lateness by 5-s window of scheduled time relative to A's start, both phases: which windows decide each p99 (the baseline's too). */
  readonly byWindow = new Map<number, number[]>();
  interval: number[] = [];
  constructor(
    private readonly aloneFrom: number,
    private readonly togetherFrom: number,
    private readonly to: number,
  ) {}
  add(d: Delivery): void {
    if (this.seen.has(d.fireId)) return;
    this.seen.add(d.fireId);
    const late = d.receivedAt - d.scheduledAt;
    this.interval.push(late);
    if (d.scheduledAt >= this.aloneFrom && d.scheduledAt < this.togetherFrom) this.alone.push(late);
    else if (d.scheduledAt >= this.togetherFrom && d.scheduledAt < this.to) this.together.push(late);
    const second = Math.floor((d.scheduledAt - this.togetherFrom) / 1000);
    if (second >= -5 && d.scheduledAt < this.to) this.bySecond.set(second, [...(this.bySecond.get(second) ?? []), late]);
    if (d.scheduledAt >= this.aloneFrom && d.scheduledAt < this.to) {
      const w = Math.floor(second / WINDOW_S) * WINDOW_S;
      const list = this.byWindow.get(w);
      if (list) list.push(late);
      else this.byWindow.set(w, [late]);
    }
  }
}

/**
 * Samples are taken this long after each whole second. B's fires are due at whole seconds, and a scrape
 * then (the executor serving /metrics, this process, which hosts the receivers, parsing it) made them
 * late: in one run B's calls took p50 13-15 ms in the sampled seconds against 7-8 ms in the others.
 */
const SAMPLE_OFFSET_MS = 500;

/** Per second of the executor around A's start (from half a second before each whole second): CPU used and deferrals by reason (deltas of its /metrics). */
class ExecutorSampler {
  readonly seconds: { second: number; cpuMs: number; appShare: number; originBusy: number }[] = [];
  private last: { cpu: number; appShare: number; originBusy: number } | undefined;
  constructor(
    private readonly stack: Stack,
    private readonly from: number,
  ) {}
  async sample(): Promise<void> {
    const m = await scrapeMetrics(this.stack.port('executor'), 900);
    if (!m) return;
    const d = metricBy(m, 'timer_delivery_deferred_total', 'reason');
    const now = { cpu: (procCpuSeconds(this.stack.pid('executor')) ?? 0) * 1000, appShare: d.app_share ?? 0, originBusy: d.origin_busy ?? 0 };
    if (this.last) {
      const second = Math.round((Date.now() - this.from - SAMPLE_OFFSET_MS) / 1000);
      this.seconds.push({ second, cpuMs: Math.round(now.cpu - this.last.cpu), appShare: now.appShare - this.last.appShare, originBusy: now.originBusy - this.last.originBusy });
    }
    this.last = now;
  }
}

async function insertTimers(s: Stack, args: Args, fastUrl: string, slowUrl: string, slowStart: number): Promise<void> {
  await s.sql('INSERT IGNORE INTO apps (app) VALUES (?), (?)', [SLOW_APP, FAST_APP]);
  const fastHook = JSON.stringify({ url: fastUrl, method: 'POST', body: '{"fast":true}' });
  const slowHook = JSON.stringify({ url: slowUrl, method: 'POST', body: '{"slow":true}', timeoutMs: args.slowMs * 2 });
  const rows: unknown[][] = [];
  for (let k = 0; k < args.fastTimers; k++) rows.push([FAST_APP, `b${k}`, `b${k}`, '* * * * * *', 'UTC', fastHook, 2, null]);
  for (let k = 0; k < args.slowTimers; k++) rows.push([SLOW_APP, `a${k}`, `a${k}`, '* * * * * *', 'UTC', slowHook, 2, slowStart]);
  for (let i = 0; i < rows.length; i += 1000) {
    await s.sql('INSERT INTO timers (app, name, live_name, cron, time_zone, notify_http_param, status, start_at) VALUES ?', [rows.slice(i, i + 1000)]);
  }
}

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  if (args.fastTimers < 1 || args.aloneSeconds < 5 || args.togetherSeconds < 5) throw new Error('need --fast-timers >= 1, --alone-seconds and --together-seconds >= 5');
  const slowSeen: Delivery[] = [];
  let phases: Phases | undefined;
  const fast = await Receiver.start({ record: false, onDelivery: (d) => phases?.add(d) });
  const slow = await Receiver.start({ record: false, onDelivery: (d) => slowSeen.push(d) });
  slow.respond(() => ({ delayMs: args.slowMs }));
  log(`receivers: fast ${fast.url()}, slow ${slow.url()} (${args.slowMs} ms)`);

  // Setup (migrator expansion, roles healthy) takes some 20-40 s; A starts well after that.
  const setupMs = 60_000;
  const slowStart = nextSecond(setupMs + args.aloneSeconds * 1000);
  const stack = await Stack.start({
    id: shortId('fair'),
    env: { ...(process.env.BENCH_DIAG === '1' ? { TIMER_EXECUTOR_DIAG_INSTANTS: 'true' } : {}), TIMER_LOG_LEVEL: 'warn', TIMER_WINDOW_MINUTES: '1', TIMER_EXECUTOR_CONCURRENCY: String(args.executorConcurrency) },
    beforeRoles: (s) => insertTimers(s, args, fast.url('/fast'), slow.url('/slow'), slowStart),
  });
  try {
    log(`roles healthy (logs in ${stack.logDir}); A's ${args.slowTimers} timers start at ${new Date(slowStart).toISOString()}`);
    const aloneFrom = slowStart - args.aloneSeconds * 1000;
    if (aloneFrom < Date.now() + 2_000) throw new Error('setup took too long: B alone would be cut short; raise setupMs');
    const to = slowStart + args.togetherSeconds * 1000;
    phases = new Phases(aloneFrom, slowStart, to);
    const progress = setInterval(() => {
      const n = phases!.interval.length;
      const p = percentiles(phases!.interval);
      phases!.interval = [];
      const phase = Date.now() < aloneFrom ? 'warm-up' : Date.now() < slowStart ? 'B alone' : 'B with A';
      log(`${phase}: B ${n} fires in 5 s, lateness p50 ${r1(p.p50)} p99 ${r1(p.p99)} ms; A delivered ${slowSeen.length}, in flight at A's receiver ${slow.inFlight}`);
    }, 5_000);
    // From 5 s before A's start to the end of the together phase, sample the executor every second (its CPU and deferrals), off the whole seconds:
    // a miss can sit anywhere in the phase (one run's in the reconciler's rescue of A's overdue fires, 34 s in).
    const sampler = new ExecutorSampler(stack, slowStart);
    const firstSample = slowStart - 6_000 + SAMPLE_OFFSET_MS;
    await sleepUntil(firstSample);
    for (let t = firstSample; t <= to; t += 1_000) {
      await sleepUntil(t);
      await sampler.sample();
    }
    await sleepUntil(to + 5_000);
    clearInterval(progress);
    const secondRows = [...phases.bySecond.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([second, l]) => {
        const p = percentiles(l);
        const ex = sampler.seconds.find((x) => x.second === second);
        return [second, l.length, r1(p.p50), r1(p.p99), r1(p.max), ex?.cpuMs ?? '', ex?.appShare ?? '', ex?.originBusy ?? ''];
      });

    const windowRows = [...phases.byWindow.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([from, l]) => {
        const p = percentiles(l);
        return [from, from < 0 ? 'alone' : 'with A', l.length, r1(p.p50), r1(p.p99), r1(p.max)] as const;
      });
    const alone = percentiles(phases.alone);
    const together = percentiles(phases.together);
    const ratio = together.p99 / alone.p99;
    const slowLate = percentiles(slowSeen.filter((d) => d.scheduledAt < to).map((d) => d.receivedAt - d.scheduledAt));
    const metrics = (await scrapeMetrics(stack.port('executor'))) ?? [];
    const deferred = metricBy(metrics, 'timer_delivery_deferred_total', 'reason');
    const [rec] = await stack.sql<Record<string, number>>(
      'SELECT SUM(app = ? AND status = 2) AS a_ok, SUM(app = ? AND status = 3) AS a_failed, SUM(app = ? AND status = 4) AS a_missed, ' +
        'SUM(app = ? AND status IN (0, 1)) AS a_open, SUM(app = ? AND status = 2) AS b_ok, SUM(app = ? AND status <> 2) AS b_other FROM tasks WHERE run_at >= ? AND run_at < ?',
      [SLOW_APP, SLOW_APP, SLOW_APP, SLOW_APP, FAST_APP, FAST_APP, slowStart, to],
    );
    const errors = await stack.sql<{ reason: string; n: number }>(
      "SELECT SUBSTRING_INDEX(error, ':', 1) AS reason, COUNT(*) AS n FROM tasks WHERE app = ? AND run_at >= ? AND run_at < ? AND error IS NOT NULL GROUP BY reason",
      [SLOW_APP, slowStart, to],
    );
    const result = {
      args,
      cpus: cpus().length,
      target: `B p99 with A <= ${TARGET_RATIO} x B p99 alone`,
      met: ratio <= TARGET_RATIO,
      b_alone_ms: { n: phases.alone.length, expected: args.fastTimers * args.aloneSeconds, p50: r1(alone.p50), p99: r1(alone.p99), max: r1(alone.max) },
      b_with_a_ms: { n: phases.together.length, expected: args.fastTimers * args.togetherSeconds, p50: r1(together.p50), p99: r1(together.p99), max: r1(together.max) },
      p99_ratio: Number(ratio.toFixed(2)),
      a: { due: args.slowTimers * args.togetherSeconds, delivered_during_run: slowSeen.filter((d) => d.scheduledAt < to).length, lateness_ms: { p50: r1(slowLate.p50), p99: r1(slowLate.p99) } },
      records_of_the_together_window: Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, Number(v ?? 0)])),
      a_last_error_by_reason: Object.fromEntries(errors.map((e) => [e.reason, Number(e.n)])),
      executor_deferred_total: deferred,
      b_by_5s_window: windowRows.map(([from, phase, n, p50, p99, max]) => ({ from, phase, n, p50, p99, max })),
      b_by_second_after_a_start: secondRows.map(([second, n, p50, p99, max, cpuMs, appShare, originBusy]) => ({ second, n, p50, p99, max, cpuMs, appShare, originBusy })),
    };
    const md = [
      `# Fairness benchmark, ${new Date().toISOString()}`,
      '',
      `App A: ${args.slowTimers} every-second timers calling an endpoint that answers after ${args.slowMs} ms; app B: ${args.fastTimers} every-second timers calling one that answers at once. ` +
        `One executor, TIMER_EXECUTOR_CONCURRENCY ${args.executorConcurrency}, ${cpus().length} CPUs. B alone for ${args.aloneSeconds} s, then with A for ${args.togetherSeconds} s.`,
      '',
      markdownTable(
        ['B lateness (ms)', 'fires', 'expected', 'p50', 'p99', 'max'],
        [
          ['alone', result.b_alone_ms.n, result.b_alone_ms.expected, result.b_alone_ms.p50, result.b_alone_ms.p99, result.b_alone_ms.max],
          ['with A', result.b_with_a_ms.n, result.b_with_a_ms.expected, result.b_with_a_ms.p50, result.b_with_a_ms.p99, result.b_with_a_ms.max],
        ],
      ),
      '',
      `p99 with A / alone: **${result.p99_ratio}** (target <= ${TARGET_RATIO}: ${result.met ? 'met' : 'missed'}).`,
      '',
      `A: ${result.a.delivered_during_run} of ${result.a.due} fires delivered during the run (lateness p50 ${result.a.lateness_ms.p50} ms, p99 ${result.a.lateness_ms.p99} ms); ` +
        `records of the window ${JSON.stringify(result.records_of_the_together_window)}, last error by reason ${JSON.stringify(result.a_last_error_by_reason)}; ` +
        `executor deferrals ${JSON.stringify(deferred)}.`,
      '',
      `B's lateness by ${WINDOW_S}-s window of scheduled time (seconds relative to A's start; the p99 of each phase comes from its worst windows):`,
      '',
      markdownTable(['from second', 'phase', 'B fires', 'p50 ms', 'p99 ms', 'max ms'], windowRows.map((r) => [...r])),
      '',
      "B's lateness by scheduled second relative to A's start, beside the executor's CPU and deferrals from half a second before it to half a second after:",
      '',
      markdownTable(['second', 'B fires', 'p50 ms', 'p99 ms', 'max ms', 'executor CPU ms', 'app_share', 'origin_busy'], secondRows),
    ].join('\n');
    const base = writeResults('fairness', result, md);
    process.stdout.write(`\n${md}\n\nwritten: ${base}.json, ${base}.md\n`);
  } finally {
    log('stopping the stack');
    await stack.stop();
    await fast.close();
    await slow.close();
    await sleep(100);
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
