import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { hostname } from 'os';
import { CLOCK, NowClock } from '@timer/platform';
import { ExecutorLag, REDIS, REDIS_KEY_PREFIX } from '@timer/redis';
import { ExecutorMetrics } from './executor.metrics';

/** How often the executor reports its lag (within the migrator's freshness, `EXECUTOR_LAG_FRESH_MS`). */
export const LAG_REPORT_MS = 1_000;
/** The quantile of the interval's call lateness reported: one slow app's few late fires do not make the executor late. */
export const LAG_QUANTILE = 0.9;

/**
 * The `q` quantile, in ms, of the observations between two snapshots of a histogram in seconds
 * (`counts` per bucket, `count` with `+Inf`), interpolated inside its bucket as Prometheus'
 * `histogram_quantile` does; the largest bound when it lies beyond it; 0 when nothing was observed.
 */
export function quantileMs(bounds: readonly number[], counts: readonly number[], count: number, q: number): number {
  if (count <= 0) return 0;
  const rank = q * count;
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    if (below + counts[i] >= rank && counts[i] > 0) {
      const lower = i === 0 ? 0 : bounds[i - 1];
      return (lower + ((bounds[i] - lower) * (rank - below)) / counts[i]) * 1000;
    }
    below += counts[i];
  }
  return bounds[bounds.length - 1] * 1000;
}

/**
 * Reports how late this executor starts its calls ({@link LAG_QUANTILE} of the lateness observed in
 * `timer_fire_lateness_seconds` over the last {@link LAG_REPORT_MS}; 0 when it called nothing) to
 * Redis (`ExecutorLag`), where the migrator paces its expansion by it (docs/scaling.md, "Expansion
 * beside delivery"). Read from the metric, so the call path does nothing more per fire.
 */
@Injectable()
export class LagReport implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LagReport.name);
  private readonly processId = `${hostname().slice(0, 60)}:${process.pid}`;
  private readonly lag: ExecutorLag;
  private last: { counts: number[]; count: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private warned = false;

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(REDIS_KEY_PREFIX) prefix: string,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {
    this.lag = new ExecutorLag(redis, prefix);
  }

  onApplicationBootstrap(): void {
    this.last = this.metrics.lateness.snapshot();
    this.timer = setInterval(() => void this.report(), LAG_REPORT_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.lag.remove(this.processId).catch(() => undefined);
  }

  /** The lag over the calls since the previous report (the histogram's reset starts over). */
  currentLagMs(): number {
    const now = this.metrics.lateness.snapshot();
    const prev = this.last && this.last.count <= now.count ? this.last : { counts: now.counts.map(() => 0), count: 0 };
    this.last = now;
    return quantileMs(
      now.bounds,
      now.counts.map((c, i) => c - prev.counts[i]),
      now.count - prev.count,
      LAG_QUANTILE,
    );
  }

  private async report(): Promise<void> {
    try {
      await this.lag.report(this.processId, this.currentLagMs(), this.clock.now());
      this.warned = false;
    } catch (e) {
      // The migrator writes at full speed without a fresh report: nothing is at risk, say it once.
      if (!this.warned) this.logger.warn(`lag report failed: ${(e as Error).message}`);
      this.warned = true;
    }
  }
}
