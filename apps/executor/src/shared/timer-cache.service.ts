import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { TimerDefinition, TimerDefinitionRepository } from '@timer/dal';
import { ExecutorConfig } from '../config/executor.env';
import { ExecutorMetrics } from './executor.metrics';

interface Entry {
  def: TimerDefinition;
  /** When the query that produced it started (conservative age). */
  at: number;
}

/** A cached definition is reloaded after this long even when no change was seen (a safety net). */
export const CACHE_MAX_AGE_MS = 5 * 60_000;
/** More changed timers than this in one poll drop the whole cache instead of listing them. */
const CHANGE_LIST_LIMIT = 10_000;
/** Ids of one miss query at most. */
export const MISS_BATCH = 500;
/** Miss queries in flight at once; misses arriving meanwhile wait and go in the next one. */
const MISS_QUERIES_IN_FLIGHT = 2;

interface Miss {
  id: string;
  resolve: (def: TimerDefinition | null) => void;
  reject: (e: unknown) => void;
}

/**
 * Timer definitions (with the app's signing secret) by id; deleted and disabled timers are cached too
 * (the executor records their fires missed). Concurrent misses of one id share one query.
 *
 * An absent timer is never cached: a fire is decided "timer not found" only on a read made after its
 * own row was seen (the claim), and timers are never removed from MySQL, so an absence seen earlier can
 * only be a row not committed yet, which no change poll would report (docs/architecture.md, "Not found").
 *
 * Freshness: every half `TIMER_EXECUTOR_CACHE_TTL_MS` one indexed query lists the timers and apps
 * changed since the last poll (TimerDefinitionRepository.changesSince) and drops their entries, so a disable,
 * delete or secret rotation is seen within the TTL while unchanged definitions stay cached (up to
 * {@link CACHE_MAX_AGE_MS}). When polls fail, entries older than the TTL are reloaded, the same
 * guarantee at a higher cost. A prefetch (every half step2, `TIMER_EXECUTOR_PREFETCH_MS`) loads in one
 * query the definitions of timers with fires due within step2, so fires rarely wait for MySQL.
 *
 * Misses are loaded in batches (one query for what missed while the previous ones ran, up to
 * {@link MISS_BATCH} ids), as the claims are: a spike larger than the prefetch's limit would otherwise
 * cost a query per fire, more than its claim and outcome (docs/benchmarks.md, "Measurements behind the code").
 */
@Injectable()
export class TimerCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(TimerCache.name);
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<TimerDefinition | null>>();
  /** When each id was last dropped for a change: a load that started before must not put it back. */
  private readonly invalidated = new Map<string, number>();
  private timers: NodeJS.Timeout[] = [];
  private watermark: string | null = null;
  /** Start of the last successful change poll (0: none yet). */
  private polledAt = 0;
  private polling = false;
  private prefetching = false;
  private misses: Miss[] = [];
  private missQueries = 0;
  private missScheduled = false;

  constructor(
    private readonly definitions: TimerDefinitionRepository,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    if (this.config.cacheTtlMs <= 0) return;
    const every = (ms: number, fn: () => Promise<void>) => {
      const t = setInterval(() => void fn(), ms);
      t.unref();
      this.timers.push(t);
      void fn();
    };
    every(Math.max(250, Math.floor(this.config.cacheTtlMs / 2)), () => this.pollChanges());
    if (this.config.prefetchMs > 0) every(Math.max(1_000, Math.floor(this.config.prefetchMs / 2)), () => this.maintain());
  }

  onModuleDestroy(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /**
   * The cached definition while it is known current (null: the timer is known not to exist), undefined
   * when only {@link get} can answer. Synchronous: a fire asks for its definition up to four times, and
   * an awaited cache hit costs promises and microtask turns each (at thousands of fires a second).
   */
  peek(id: string): TimerDefinition | null | undefined {
    const e = this.entries.get(id);
    return e && this.isCurrent(e) ? e.def : undefined;
  }

  /**
   * The definition, from the cache while it is known current, else from MySQL; `fresh`: from a query
   * that starts now (not one already in flight, which may have begun before the caller saw a row).
   */
  async get(id: string, fresh = false): Promise<TimerDefinition | null> {
    const e = this.entries.get(id);
    if (!fresh && e && this.isCurrent(e)) return e.def;
    if (fresh) return this.load(id);
    let p = this.loading.get(id);
    if (!p) {
      p = this.load(id).finally(() => this.loading.delete(id));
      this.loading.set(id, p);
    }
    return p;
  }

  /** Loads the definitions of timers with open (pending or running) fires in [now, now + step2); returns how many. */
  async prefetch(): Promise<number> {
    if (this.config.prefetchMs <= 0 || this.config.cacheTtlMs <= 0) return 0;
    const at = this.clock.now();
    const defs = await this.definitions.definitionsDueBetween(at, at + this.config.prefetchMs, this.config.prefetchLimit);
    for (const d of defs) this.put(d.timer.id, d, at);
    this.metrics.prefetched.inc(defs.length);
    return defs.length;
  }

  /**
   * Drops the entries of timers and apps changed since the previous poll. The first poll only sets
   * the watermark: entries loaded before it are judged by their age until the next poll has run.
   */
  async pollChanges(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    const started = this.clock.now();
    try {
      const changes = await this.definitions.changesSince(this.watermark, CHANGE_LIST_LIMIT);
      if (this.watermark !== null) {
        if (changes.timerIds === null) {
          for (const id of this.entries.keys()) this.invalidate(id, started);
        } else {
          for (const id of changes.timerIds) this.invalidate(id, started);
        }
        if (changes.apps.length > 0) {
          const apps = new Set(changes.apps);
          for (const [id, e] of this.entries) if (e.def && apps.has(e.def.timer.app)) this.invalidate(id, started);
        }
        this.polledAt = started;
      }
      this.watermark = changes.watermark;
    } catch (e) {
      this.logger.warn(`polling timer changes failed (definitions older than the TTL are reloaded): ${(e as Error).message}`);
    } finally {
      this.polling = false;
    }
  }

  /** Drops entries past the maximum age, so the map does not grow with every timer ever seen. */
  evict(): void {
    const now = this.clock.now();
    for (const [id, e] of this.entries) if (now - e.at >= CACHE_MAX_AGE_MS) this.entries.delete(id);
    const cutoff = now - 2 * this.config.cacheTtlMs - 60_000;
    for (const [id, at] of this.invalidated) if (at < cutoff) this.invalidated.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Current when younger than the TTL, or (change polls running) loaded before the last poll began
   * or after it, younger than the maximum age, and that poll is younger than the TTL: any change
   * older than the TTL has then been seen and would have dropped the entry.
   */
  private isCurrent(e: Entry): boolean {
    const now = this.clock.now();
    const ttl = this.config.cacheTtlMs;
    if (now - e.at < ttl) return true;
    return this.polledAt > 0 && now - this.polledAt < ttl && now - e.at < CACHE_MAX_AGE_MS;
  }

  private invalidate(id: string, at: number): void {
    this.entries.delete(id);
    this.invalidated.set(id, at);
  }

  private async maintain(): Promise<void> {
    if (this.prefetching) return;
    this.prefetching = true;
    try {
      this.evict();
      await this.prefetch();
    } catch (e) {
      this.logger.warn(`prefetch of timer definitions failed (fires load them as they miss, in batches): ${(e as Error).message}`);
    } finally {
      this.prefetching = false;
    }
  }

  private load(id: string): Promise<TimerDefinition | null> {
    return new Promise((resolve, reject) => {
      this.misses.push({ id, resolve, reject });
      this.scheduleMisses();
    });
  }

  /** On the next turn of the event loop while a query slot is free: a lone miss waits for nothing else. */
  private scheduleMisses(): void {
    if (this.missScheduled || this.missQueries >= MISS_QUERIES_IN_FLIGHT || this.misses.length === 0) return;
    this.missScheduled = true;
    setImmediate(() => {
      this.missScheduled = false;
      while (this.missQueries < MISS_QUERIES_IN_FLIGHT && this.misses.length > 0) {
        this.missQueries++;
        void this.loadMisses(this.misses.splice(0, MISS_BATCH)).finally(() => {
          this.missQueries--;
          this.scheduleMisses();
        });
      }
    });
  }

  /** One query for a batch of misses; an id it does not return is answered null and not cached. */
  private async loadMisses(batch: Miss[]): Promise<void> {
    const at = this.clock.now();
    try {
      const found = new Map((await this.definitions.definitions(batch.map((m) => m.id))).map((d) => [d.timer.id, d]));
      for (const m of batch) {
        const def = found.get(m.id) ?? null;
        this.put(m.id, def, at);
        m.resolve(def);
      }
    } catch (e) {
      for (const m of batch) m.reject(e);
    }
  }

  private put(id: string, def: TimerDefinition | null, at: number): void {
    if (def === null) return;
    // A change poll that started after this load began may have seen a change the load missed.
    if ((this.invalidated.get(id) ?? -Infinity) >= at) return;
    const e = this.entries.get(id);
    if (!e || e.at <= at) this.entries.set(id, { def, at });
  }
}
