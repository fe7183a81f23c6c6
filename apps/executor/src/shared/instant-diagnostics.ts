import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { IntervalHistogram, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { ExecutorConfig } from '../config/executor.env';

/** What the executor did around a due instant: kinds of work recorded with their time. */
export type DiagnosedWork = 'message' | 'claim-batch' | 'outcome-write' | 'mark-flush' | 'call-done' | 'origin-refused' | 'hand-back' | 'heavy-wait';

const SECOND_MS = 1_000;
/** Work and GC from this long before an instant to this long after it are reported with it. */
const AROUND_MS = 300;
/** Work is reported in bins of this width (ms from the instant); event-loop stalls are sampled this often. */
const BIN_MS = 25;
const STALL_TICK_MS = 5;
/** A tick this much later than asked is a stall worth reporting. */
const STALL_MIN_MS = 8;

interface Instant {
  /** Offsets from the instant (ms) of each fire's claim, wake-up at its time, and call start. */
  claimed: number[];
  woke: number[];
  called: number[];
}

/**
 * TIMER_EXECUTOR_DIAG_INSTANTS=true: one log line per due instant (whole second) saying when its fires
 * were claimed, woke and called, the GC pauses and the other work (messages, claim batches of other
 * instants, outcome writes, call-mark flushes) around it, and the event loop's delay. A diagnostic for
 * lateness under bursts; off by default, then every method returns at once.
 */
@Injectable()
export class InstantDiagnostics implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(InstantDiagnostics.name);
  readonly on: boolean;
  private readonly instants = new Map<number, Instant>();
  private work: { kind: DiagnosedWork; at: number; n: number }[] = [];
  private gcs: { at: number; ms: number; kind: number }[] = [];
  private observer: PerformanceObserver | undefined;
  private delay: IntervalHistogram | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private stalls: { at: number; ms: number }[] = [];

  constructor(config: ExecutorConfig) {
    this.on = config.diagInstants;
  }

  onApplicationBootstrap(): void {
    if (!this.on) return;
    this.delay = monitorEventLoopDelay({ resolution: 5 });
    this.delay.enable();
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.gcs.push({ at: Math.round(performance.timeOrigin + e.startTime), ms: e.duration, kind: (e as { detail?: { kind?: number } }).detail?.kind ?? 0 });
    });
    this.observer.observe({ entryTypes: ['gc'] });
    let last = Date.now();
    this.stallTimer = setInterval(() => {
      const now = Date.now();
      if (now - last - STALL_TICK_MS >= STALL_MIN_MS) this.stalls.push({ at: last, ms: now - last - STALL_TICK_MS });
      last = now;
    }, STALL_TICK_MS);
    this.stallTimer.unref();
    // Reports instant T at T + 900 ms: its calls are out by then.
    const next = Math.ceil(Date.now() / SECOND_MS) * SECOND_MS + 900;
    setTimeout(() => {
      this.timer = setInterval(() => this.report(Math.floor(Date.now() / SECOND_MS) * SECOND_MS), SECOND_MS);
      this.report(Math.floor(Date.now() / SECOND_MS) * SECOND_MS);
    }, next - Date.now()).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
    clearInterval(this.stallTimer);
    this.observer?.disconnect();
    this.delay?.disable();
  }

  claimed(runAt: number): void {
    if (this.on) this.of(runAt)?.claimed.push(Date.now() - runAt);
  }

  woke(target: number): void {
    if (this.on) this.of(target)?.woke.push(Date.now() - target);
  }

  called(target: number): void {
    if (this.on) this.of(target)?.called.push(Date.now() - target);
  }

  did(kind: DiagnosedWork, n = 1): void {
    if (this.on) this.work.push({ kind, at: Date.now(), n });
  }

  private of(at: number): Instant | undefined {
    if (at % SECOND_MS !== 0) return undefined;
    let i = this.instants.get(at);
    if (!i) {
      i = { claimed: [], woke: [], called: [] };
      this.instants.set(at, i);
    }
    return i;
  }

  private report(t: number): void {
    const i = this.instants.get(t);
    for (const at of this.instants.keys()) if (at <= t) this.instants.delete(at);
    const from = t - AROUND_MS;
    const to = t + AROUND_MS;
    // Per kind: fires (or items) by BIN_MS bin of their offset from the instant.
    const work: Record<string, Record<number, number>> = {};
    for (const w of this.work) {
      if (w.at < from || w.at >= to) continue;
      const bins = (work[w.kind] ??= {});
      const bin = Math.floor((w.at - t) / BIN_MS) * BIN_MS;
      bins[bin] = (bins[bin] ?? 0) + w.n;
    }
    const stalls = this.stalls.filter((x) => x.at >= from && x.at < to).map((x) => [x.at - t, x.ms]);
    this.stalls = this.stalls.filter((x) => x.at >= to);
    this.work = this.work.filter((w) => w.at >= to);
    const gc = this.gcs.filter((g) => g.at >= from && g.at < to).map((g) => [g.at - t, Math.round(g.ms * 10) / 10, g.kind]);
    this.gcs = this.gcs.filter((g) => g.at >= to);
    const d = this.delay;
    const line = {
      t,
      n: i?.called.length ?? 0,
      claimed: spread(i?.claimed),
      woke: spread(i?.woke),
      called: spread(i?.called),
      gc,
      stalls,
      work,
      loopDelayMs: d ? { p50: Math.round(d.percentile(50) / 1e5) / 10, p99: Math.round(d.percentile(99) / 1e5) / 10, max: Math.round(d.max / 1e5) / 10 } : null,
    };
    d?.reset();
    if (line.n > 0) this.logger.warn(`instant-diag ${JSON.stringify(line)}`);
  }
}

/** First, median, 90th percentile and last of offsets (ms). */
function spread(xs: number[] | undefined): number[] | null {
  if (!xs || xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return [s[0], s[Math.floor(s.length / 2)], s[Math.floor(s.length * 0.9)], s[s.length - 1]];
}
