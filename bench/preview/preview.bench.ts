/**
 * Preview benchmark (a command, not a test): how long `GET /api/timer/v1/preview` computes.
 *
 *   npm run bench:preview -- [--samples 50] [--count 1000]
 *
 * For each expression and each of 10 zones it asks previewFireTimes (what the route calls; the rest
 * of the route is formatting) for --count fires from --samples instants spread over the next 10
 * years, and reports per expression the p50/p99/max over all zones and samples, after a first call
 * per zone that fills the zone's transition cache ("cold", reported apart, after the api's boot warm-up). Target (issue 16): under
 * 20 ms. No servers. Writes .local/results/preview-<time>.json and .md and prints the table.
 */
import { cpus, loadavg } from 'node:os';
import { previewFireTimes, warmUpSchedules } from '@timer/schedule';
import { markdownTable, numericFlags, percentiles, writeResults } from '../../e2e/support';

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Sydney',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'America/St_Johns',
  'Pacific/Chatham',
  'America/Santiago',
  'Africa/Casablanca',
  'Asia/Tokyo',
];
const EXPRESSIONS = ['0 0 29 2 *', '0 0 ? 2 1#5', '0 0 L * 5L', '30 2 * * *', '0 9 * * MON-FRI', '*/5 * * * *', '*/5 * * * * *', '* * * * * *'];
const TARGET_MS = 20;
const YEAR_MS = 365 * 86_400_000;

function timed(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function main(): void {
  const args = numericFlags(process.argv.slice(2), { samples: 50, count: 1000 });
  const now = Date.now();
  // What the api does at boot (PreviewService), so "cold" is a zone's empty cache, not V8's first compile.
  warmUpSchedules(now);
  const cold = ZONES.map((timeZone) => ({ timeZone, ms: timed(() => previewFireTimes({ cron: EXPRESSIONS[0], timeZone }, now, args.count)) }));
  const rows = EXPRESSIONS.map((cron) => {
    const ms: number[] = [];
    let fires = 0;
    for (const timeZone of ZONES) {
      for (let i = 0; i < args.samples; i++) {
        const from = now + Math.floor((i / args.samples) * 10 * YEAR_MS);
        ms.push(timed(() => (fires = previewFireTimes({ cron, timeZone }, from, args.count).length)));
      }
    }
    return { cron, fires, ...percentiles(ms) };
  });
  const env = { node: process.version, cpus: cpus().length, loadavg: loadavg().map((l) => Number(l.toFixed(1))), samplesPerZone: args.samples, count: args.count, zones: ZONES };
  const table = markdownTable(
    ['expression', 'fires (last)', 'p50 ms', 'p99 ms', 'max ms', `under ${TARGET_MS} ms`],
    rows.map((r) => [`\`${r.cron}\``, r.fires, r.p50, r.p99, r.max, r.max < TARGET_MS ? 'yes' : r.p99 < TARGET_MS ? 'p99' : 'no']),
    2,
  );
  const coldTable = markdownTable(['zone', `first call (\`${EXPRESSIONS[0]}\`, empty cache) ms`], cold.map((c) => [c.timeZone, c.ms]), 1);
  const md = `# Preview benchmark\n\n${JSON.stringify(env)}\n\n${table}\n\n${coldTable}\n`;
  const base = writeResults('preview', { env, rows, cold }, md);
  process.stdout.write(`${md}\nwritten: ${base}.json, .md\n`);
}

main();
