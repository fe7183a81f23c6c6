import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { FireRepository, TimerDefinition } from '@timer/dal';
import { Clock, CLOCK } from '../common/clock';
import { ExecutorConfig } from '../config/executor.env';
import { ExecutorMetrics } from './executor.metrics';

interface Entry {
  def: TimerDefinition | null;
  /** When the query that produced it started (conservative age). */
  at: number;
}

/**
 * Timer definitions (with the app's signing secret) by id, each used for at most
 * `TIMER_EXECUTOR_CACHE_TTL_MS`, so a disable or delete stops fires within that time; deleted and
 * disabled timers are cached too (the executor records their fires missed). Concurrent misses of
 * one id share one query. A prefetch loop (every TTL) loads in one query the definitions of timers
 * with pending fires due within step2 (`TIMER_EXECUTOR_PREFETCH_MS`), so fires rarely wait for MySQL.
 */
@Injectable()
export class TimerCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(TimerCache.name);
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<TimerDefinition | null>>();
  private interval: NodeJS.Timeout | undefined;
  private prefetching = false;

  constructor(
    private readonly fires: FireRepository,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    const period = Math.max(500, this.config.cacheTtlMs);
    this.interval = setInterval(() => void this.maintain(), period);
    this.interval.unref();
    void this.maintain();
  }

  onModuleDestroy(): void {
    if (this.interval) clearInterval(this.interval);
    this.interval = undefined;
  }

  /** The definition, from the cache when younger than the TTL (unless `fresh`), else from MySQL. */
  async get(id: string, fresh = false): Promise<TimerDefinition | null> {
    const e = this.entries.get(id);
    if (!fresh && e && this.clock.now() - e.at < this.config.cacheTtlMs) return e.def;
    let p = this.loading.get(id);
    if (!p) {
      p = this.load(id).finally(() => this.loading.delete(id));
      this.loading.set(id, p);
    }
    return p;
  }

  /** Loads the definitions of timers with pending fires in [now, now + step2); returns how many. */
  async prefetch(): Promise<number> {
    if (this.config.prefetchMs <= 0 || this.config.cacheTtlMs <= 0) return 0;
    const at = this.clock.now();
    const defs = await this.fires.definitionsDueBetween(at, at + this.config.prefetchMs, this.config.prefetchLimit);
    for (const d of defs) this.put(d.timer.id, d, at);
    this.metrics.prefetched.inc(defs.length);
    return defs.length;
  }

  /** Drops entries nobody refreshed for a while, so the map does not grow with every timer ever seen. */
  evict(): void {
    const cutoff = this.clock.now() - Math.max(10 * this.config.cacheTtlMs, 60_000);
    for (const [id, e] of this.entries) if (e.at < cutoff) this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }

  private async maintain(): Promise<void> {
    if (this.prefetching) return;
    this.prefetching = true;
    try {
      this.evict();
      await this.prefetch();
    } catch (e) {
      this.logger.warn(`prefetch of timer definitions failed (fires load them one by one): ${(e as Error).message}`);
    } finally {
      this.prefetching = false;
    }
  }

  private async load(id: string): Promise<TimerDefinition | null> {
    const at = this.clock.now();
    const def = await this.fires.definition(id);
    this.put(id, def, at);
    return def;
  }

  private put(id: string, def: TimerDefinition | null, at: number): void {
    const e = this.entries.get(id);
    if (!e || e.at <= at) this.entries.set(id, { def, at });
  }
}
