import { appendFile } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * DIAGNOSTIC ONLY (bench:fairness --trace 1; not for merge): per-fire stage times and event-loop stalls,
 * appended once a second to TIMER_DIAG_TRACE_FILE as JSON lines.
 */
const FILE = process.env.TIMER_DIAG_TRACE_FILE;
const stages = new Map<string, Record<string, number>>();
const stalls: number[][] = [];
let lines: string[] = [];

if (FILE) {
  let last = Date.now();
  setInterval(() => {
    const now = Date.now();
    if (now - last > 15) stalls.push([last, now - last]);
    last = now;
  }, 5).unref();
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  setInterval(() => {
    for (const [id, s] of stages) if (s.call !== undefined || Date.now() - (s.arrive ?? 0) > 20_000) lines.push(JSON.stringify({ id, ...s }));
    for (const [id, s] of stages) if (s.call !== undefined || Date.now() - (s.arrive ?? 0) > 20_000) stages.delete(id);
    for (const st of stalls.splice(0)) lines.push(JSON.stringify({ stall: st[0], ms: st[1] }));
    if (lines.length === 0) return;
    const out = lines.join('\n') + '\n';
    lines = [];
    appendFile(FILE, out, () => undefined);
  }, 1_000).unref();
}

export function traceStage(fireId: string, stage: string): void {
  if (!FILE) return;
  let s = stages.get(fireId);
  if (!s) stages.set(fireId, (s = {}));
  if (s[stage] === undefined) s[stage] = Date.now();
}
