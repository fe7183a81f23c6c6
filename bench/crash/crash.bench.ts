/**
 * Crash-duplicates benchmark (a command, not a test; issue 10 item 5): how many fires reach the
 * receiver twice when an executor is SIGKILLed at 1,000 fires/s.
 *
 *   npm run bench:crash -- [--timers 1000] [--executors 2] [--kill-every 20] [--duration 120] [--flush-ms 0] [--phase-max 1000]
 *
 * Before the roles start (Stack `beforeRoles`, fresh database) it inserts --timers enabled
 * every-second timers calling a receiver that answers at once; the roles run with --executors
 * executor processes on one subscription. Once the fires of the window exist it measures --duration
 * seconds of scheduled fires; every --kill-every seconds (the first after half of it) one executor,
 * in turn, is SIGKILLed and restarted at once on its port (as a supervisor would, e2e/chaos's way),
 * the kills spread evenly over the first --phase-max ms of their seconds.
 * Before each kill and at the end it reads `timer_duplicate_deliveries_total{reason}` from every
 * executor's /metrics (the count a killed process had is kept: its last reading). At the receiver,
 * per fire of the window: delivered once, twice or more (and how many of the later deliveries carried
 * `X-Timer-Redelivery: 1`), missing. --flush-ms sets TIMER_EXECUTOR_FLUSH_MS (0: the default, 50).
 * Writes .local/results/crash-<time>.json and .md.
 */
import { cpus } from 'node:os';
import { Delivery, markdownTable, metricBy, nextSecond, numericFlags, Receiver, scrapeMetrics, shortId, sleep, sleepUntil, Stack, writeResults } from '../../e2e/support';

const APP = 'crash';
const DEFAULTS = { timers: 1_000, executors: 2, killEvery: 20, duration: 120, flushMs: 0, phaseMax: 1_000 };

const log = (s: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);

/** Deliveries per fire of the window [from, to). */
class Ledger {
  readonly byFire = new Map<string, { n: number; flaggedLater: number; flaggedFirst: boolean; first: number; last: number }>();
  outside = 0;
  constructor(
    readonly from: number,
    readonly to: number,
  ) {}
  add(d: Delivery): void {
    if (d.scheduledAt < this.from || d.scheduledAt >= this.to) {
      this.outside++;
      return;
    }
    const e = this.byFire.get(d.fireId);
    if (!e) {
      this.byFire.set(d.fireId, { n: 1, flaggedLater: 0, flaggedFirst: d.redelivery, first: d.receivedAt, last: d.receivedAt });
      return;
    }
    e.n++;
    e.last = d.receivedAt;
    if (d.redelivery) e.flaggedLater++;
  }
}

interface Kill {
  at: number;
  member: number;
  pid: number | undefined;
  restartedInMs: number;
  /** Sum over executors of timer_duplicate_deliveries_total read just before this kill. */
  redeliveriesBefore: Record<string, number>;
}

/** The executors' redelivery counters, a killed incarnation's last reading kept. */
class RedeliveryCounter {
  private readonly kept: Record<string, number>[] = [];
  private readonly current = new Map<number, Record<string, number>>();
  constructor(private readonly stack: Stack) {}
  async read(): Promise<Record<string, number>> {
    for (const m of this.stack.members('executor')) {
      if (!m.running) continue;
      const samples = await scrapeMetrics(m.port, 2_000);
      if (samples) this.current.set(m.index, metricBy(samples, 'timer_duplicate_deliveries_total', 'reason'));
    }
    return this.total();
  }
  /** The member is about to die: its last reading is kept, its next incarnation starts from 0. */
  retire(index: number): void {
    const last = this.current.get(index);
    if (last) this.kept.push(last);
    this.current.delete(index);
  }
  total(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of [...this.kept, ...this.current.values()]) for (const [k, v] of Object.entries(r)) out[k] = (out[k] ?? 0) + v;
    return out;
  }
}

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  if (args.timers < 1 || args.executors < 2 || args.killEvery < 5 || args.duration < args.killEvery) throw new Error('need --timers >= 1, --executors >= 2, --kill-every >= 5, --duration >= --kill-every');
  let ledger: Ledger | undefined;
  const receiver = await Receiver.start({ record: false, onDelivery: (d) => ledger?.add(d) });
  const hook = JSON.stringify({ url: receiver.url('/crash'), method: 'POST', body: '{"crash":true}' });
  const env: Record<string, string> = { TIMER_LOG_LEVEL: 'warn', TIMER_WINDOW_MINUTES: '1' };
  if (args.flushMs > 0) env.TIMER_EXECUTOR_FLUSH_MS = String(args.flushMs);
  log(`receiver ${receiver.url()}; starting the stack (${args.executors} executors${args.flushMs > 0 ? `, TIMER_EXECUTOR_FLUSH_MS ${args.flushMs}` : ''})`);
  const stack = await Stack.start({
    id: shortId('crash'),
    env,
    replicas: { executor: args.executors },
    beforeRoles: async (s) => {
      await s.sql('INSERT IGNORE INTO apps (app) VALUES (?)', [APP]);
      for (let i = 0; i < args.timers; i += 1000) {
        const rows: unknown[][] = [];
        for (let k = i; k < Math.min(args.timers, i + 1000); k++) rows.push([APP, `c${k}`, `c${k}`, '* * * * * *', 'UTC', hook, 2]);
        await s.sql('INSERT INTO timers (app, name, live_name, cron, time_zone, notify_http_param, status) VALUES ?', [rows]);
      }
    },
  });
  try {
    log(`roles healthy (logs in ${stack.logDir})`);
    // The window starts once its first and last seconds' fires exist (the migrator expands the timers).
    let from = 0;
    let to = 0;
    for (const giveUp = Date.now() + 300_000; ; ) {
      from = nextSecond(10_000);
      to = from + args.duration * 1000;
      const [a] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM tasks WHERE run_at = ?', [from]);
      const [b] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM tasks WHERE run_at = ?', [to - 1000]);
      if (Number(a.n) >= args.timers && Number(b.n) >= args.timers) break;
      if (Date.now() > giveUp) throw new Error(`the window's fires were not created within 5 min (${a.n}, ${b.n} of ${args.timers})`);
      log(`waiting for the window's fires (${a.n}, ${b.n} of ${args.timers})`);
      await sleep(3_000);
    }
    ledger = new Ledger(from, to);
    const counter = new RedeliveryCounter(stack);
    const kills: Kill[] = [];
    log(`measuring fires scheduled from ${new Date(from).toISOString()} for ${args.duration} s`);
    let victim = 0;
    const bases: number[] = [];
    for (let base = from + (args.killEvery * 1000) / 2; base < to - 5_000; base += args.killEvery * 1000) bases.push(base);
    for (const [i, base] of bases.entries()) {
      // Kill i at its own point of the second, spread evenly over [0, --phase-max) ms: fires are due on
      // whole seconds, so a kill at :000 finds them claimed and waiting, none called, and one at :900
      // finds every callback long done; --phase-max 200 puts every kill in the callbacks' first 200 ms.
      const at = base + Math.floor(((i + 0.5) * Math.min(1_000, args.phaseMax)) / bases.length);
      await sleepUntil(at - 1_000);
      const redeliveriesBefore = await counter.read();
      await sleepUntil(at);
      const member = stack.members('executor')[victim % args.executors];
      victim++;
      counter.retire(member.index);
      const killedAt = Date.now();
      await stack.killMember('executor', member.index, 'SIGKILL');
      await stack.restartMember('executor', member.index);
      const kill = { at: killedAt, member: member.index, pid: member.pid, restartedInMs: Date.now() - killedAt, redeliveriesBefore };
      kills.push(kill);
      log(`SIGKILL executor #${member.index} (pid ${member.pid}) at ${new Date(killedAt).toISOString()}, back in ${kill.restartedInMs} ms; redeliveries so far ${JSON.stringify(redeliveriesBefore)}`);
    }
    // Settle: the last fires and every takeover (a dead holder's claims within the liveness TTL).
    await sleepUntil(to + 20_000);
    const redeliveries = await counter.read();

    const expected = args.timers * args.duration;
    let once = 0;
    let twice = 0;
    let more = 0;
    let secondFlagged = 0;
    let firstFlagged = 0;
    const dupNearKill = kills.map(() => 0);
    for (const e of ledger.byFire.values()) {
      if (e.flaggedFirst) firstFlagged++;
      if (e.n === 1) once++;
      else if (e.n === 2) twice++;
      else more++;
      if (e.n > 1) {
        secondFlagged += e.flaggedLater > 0 ? 1 : 0;
        // The kill whose takeover the duplicate belongs to: the last kill before its second delivery.
        const k = kills.reduce((best, kk, i) => (kk.at <= e.last ? i : best), -1);
        if (k >= 0) dupNearKill[k]++;
      }
    }
    const missing = expected - ledger.byFire.size;
    const [rec] = await stack.sql<Record<string, number>>(
      'SELECT SUM(status = 2) AS succeeded, SUM(status = 3) AS failed, SUM(status = 4) AS missed, SUM(status IN (0, 1)) AS open FROM tasks WHERE run_at >= ? AND run_at < ?',
      [from, to],
    );
    const redelivered = Object.values(redeliveries).reduce((a, b) => a + b, 0);
    const duplicates = twice + more;
    const result = {
      args: { ...args, flushMs: args.flushMs > 0 ? args.flushMs : 'default (50)' },
      cpus: cpus().length,
      window: { from: new Date(from).toISOString(), seconds: args.duration, expected },
      kills: kills.map((k, i) => ({ at: new Date(k.at).toISOString(), ms_into_second: k.at % 1000, member: k.member, restarted_in_ms: k.restartedInMs, duplicates_after: dupNearKill[i] })),
      receiver: { delivered_once: once, delivered_twice: twice, delivered_more: more, missing, second_deliveries_flagged_redelivery: secondFlagged, first_deliveries_flagged: firstFlagged, outside_window: ledger.outside },
      executors_duplicate_deliveries_total: redeliveries,
      duplicates_per_kill: kills.length ? Number((duplicates / kills.length).toFixed(1)) : null,
      // The survivors' redeliveries are the killed executor's fires in flight (claimed, outcome not yet durable).
      in_flight_redelivered_per_kill: kills.length ? Number((redelivered / kills.length).toFixed(1)) : null,
      duplicates_per_in_flight_fire: redelivered > 0 ? Number((duplicates / redelivered).toFixed(3)) : null,
      records_of_the_window: Object.fromEntries(Object.entries(rec).map(([k, v]) => [k, Number(v ?? 0)])),
    };
    const md = [
      `# Crash duplicates, ${new Date().toISOString()}`,
      '',
      `${args.timers} every-second timers (${args.timers} fires/s), ${args.executors} executors, one SIGKILLed (and restarted) every ${args.killEvery} s, ${args.duration} s of fires; ` +
        `TIMER_EXECUTOR_FLUSH_MS ${result.args.flushMs}; ${cpus().length} CPUs.`,
      '',
      markdownTable(
        ['expected', 'once', 'twice', 'more', 'missing', '2nd flagged X-Timer-Redelivery', 'kills', 'duplicates / kill', 'redelivered (in flight) / kill', 'duplicates / in-flight fire'],
        [[expected, once, twice, more, missing, secondFlagged, kills.length, result.duplicates_per_kill ?? '-', result.in_flight_redelivered_per_kill ?? '-', result.duplicates_per_in_flight_fire ?? '-']],
      ),
      '',
      `Per kill (duplicates whose second delivery followed it; the kill's ms into the second the fires are due on): ` +
        `${result.kills.map((k) => `#${k.member} at :${k.ms_into_second} ${k.duplicates_after}`).join(', ')}. ` +
        `Deliveries flagged X-Timer-Redelivery that were the fire's first: ${result.receiver.first_deliveries_flagged}.`,
      `timer_duplicate_deliveries_total over the executors: ${JSON.stringify(redeliveries)}; records of the window ${JSON.stringify(result.records_of_the_window)}.`,
    ].join('\n');
    const base = writeResults('crash', result, md);
    process.stdout.write(`\n${md}\n\nwritten: ${base}.json, ${base}.md\n`);
  } finally {
    log('stopping the stack');
    await stack.stop();
    await receiver.close();
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
