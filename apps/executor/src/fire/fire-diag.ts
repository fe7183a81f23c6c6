import { appendFile } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/**
 * DIAGNOSTIC ONLY (bench:fairness --diag 1; not for merge): per second of wall time, the event loop's
 * delay, its stalls and GC pauses (with their offset in the second), and counts of the executor's work
 * (arrivals, hand-backs, claims, calls, completions, outcome flushes) in 100-ms buckets, appended to
 * TIMER_DIAG_FILE as JSON lines.
 */
const FILE = process.env.TIMER_DIAG_FILE;
export const diagOn = FILE !== undefined && FILE !== '';

type Second = { gc: number[][]; stalls: number[][]; work: Record<string, number[]> };
const seconds = new Map<number, Second>();

function secondOf(t: number): Second {
  const s = Math.floor(t / 1000);
  let v = seconds.get(s);
  if (!v) seconds.set(s, (v = { gc: [], stalls: [], work: {} }));
  return v;
}

/** Counts `n` of `kind` at now (ms bucket of 100). */
export function diag(kind: string, n = 1): void {
  if (!diagOn) return;
  const t = Date.now();
  const w = secondOf(t).work;
  const b = w[kind] ?? (w[kind] = new Array<number>(10).fill(0));
  b[Math.floor((t % 1000) / 100)] += n;
}

if (diagOn) {
  let last = Date.now();
  setInterval(() => {
    const now = Date.now();
    if (now - last > 12) secondOf(last).stalls.push([last % 1000, now - last]);
    last = now;
  }, 2).unref();
  const origin = performance.timeOrigin;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const at = origin + e.startTime;
      secondOf(at).gc.push([Math.round(at % 1000), Math.round(e.duration * 10) / 10, ((e as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1)]);
    }
  }).observe({ entryTypes: ['gc'] });
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  setInterval(() => {
    const cut = Math.floor(Date.now() / 1000) - 1;
    const lines: string[] = [];
    for (const [s, v] of seconds) {
      if (s > cut) continue;
      lines.push(JSON.stringify({ s, ...v }));
      seconds.delete(s);
    }
    lines.push(JSON.stringify({ eld: Math.floor(Date.now() / 1000), max: Math.round(h.max / 1e6), p99: Math.round(h.percentile(99) / 1e6), cpu: process.cpuUsage() }));
    h.reset();
    appendFile(FILE!, lines.join('\n') + '\n', () => undefined);
  }, 1_000).unref();
}
