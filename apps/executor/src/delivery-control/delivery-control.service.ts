import { Inject, Injectable } from '@nestjs/common';
import { CallbackResult } from '@timer/callback';
import { Clock, CLOCK } from '@timer/platform';
import { ExecutorConfig } from '../config/executor.env';
import { AppFairShare } from './app-fair-share';
import { DeferralReason, DeliveryControlMetrics, TOP_ORIGINS } from './delivery-control.metrics';
import { CircuitState, OriginBreaker, verdictOf } from './origin-breaker';
import { OriginLimiter, RampSettings } from './origin-limiter';

/** An origin's entry is forgotten after this long without a call, once it has nothing to remember. */
export const ORIGIN_IDLE_MS = 10 * 60_000;
/**
 * A new origin's concurrency: 16 calls, doubled every 100 ms (TIMER_ORIGIN_CONCURRENCY 256 after
 * 400 ms), so a new origin with many fires due does not open all its connections in the instant
 * other apps' fires are due (docs/benchmarks.md, "Measurements behind the code"); the limit of an
 * origin already in use is never ramped.
 */
export const ORIGIN_RAMP: RampSettings = { start: 16, stepMs: 100 };

interface Origin {
  breaker: OriginBreaker;
  limiter: OriginLimiter;
  calls: number;
  lastUsed: number;
  /** The half-open circuit's probe, while it is out: the fires that meet it wait for its answer. */
  probe: { settled: Promise<void>; resolve: () => void } | null;
}

/**
 * Go ahead (then report the answer with `done`, which says when the next call may go, or give the slot
 * back unused with `cancel`), or not now.
 */
export type OriginGate =
  | { go: true; waitedMs: number; done: (result: CallbackResult) => number; cancel: () => void }
  | { go: false; reason: DeferralReason; until: number; result: CallbackResult };

const ALWAYS: OriginGate = { go: true, waitedMs: 0, done: () => 0, cancel: () => undefined };

/**
 * Per-process delivery control (docs/behaviour.md, "Adaptive delivery" and "Fair delivery"): for each
 * callback origin (scheme://host:port) a concurrency limit, a circuit breaker and the receiver's
 * Retry-After; and the share of the handlers each app may hold. State is this process's own: with N
 * executors an origin sees up to N times the limit, and each executor sends its own probe.
 */
@Injectable()
export class DeliveryControl {
  readonly shares: AppFairShare;
  private readonly origins = new Map<string, Origin>();
  private sweptAt = 0;

  constructor(
    private readonly config: ExecutorConfig,
    private readonly metrics: DeliveryControlMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.shares = new AppFairShare(config.concurrency);
    metrics.onCollect(() => this.exportState());
  }

  /**
   * Whether a call to `url` would go out at once now: an origin in use, its circuit closed, no
   * Retry-After running and a slot free (a new origin, still ramping, says no). Changes nothing.
   */
  wouldGoNow(url: unknown): boolean {
    const key = originOf(url);
    const o = key === null ? undefined : this.origins.get(key);
    if (!o) return false;
    const now = this.clock.now();
    return o.breaker.state === CircuitState.Closed && o.breaker.notBefore(now) <= now && o.limiter.waiting === 0 && o.limiter.inFlight < o.limiter.currentLimit();
  }

  /**
   * Before a call to `url`: refused while its origin's circuit is open or a Retry-After runs (the
   * attempt is deferred to `until`), else a slot of the origin, waited for at most the lease's spare
   * time (`origin_busy` after it). An unparseable URL is not gated (the call itself reports it).
   */
  async enter(url: unknown): Promise<OriginGate> {
    const key = originOf(url);
    if (key === null) return ALWAYS;
    const now = this.clock.now();
    const o = this.origin(key, now);
    let decision = o.breaker.check(now);
    if (!decision.pass && decision.reason === 'circuit_open' && o.probe) {
      // A probe is out: its answer (a failing origin answers in milliseconds) decides for this fire too,
      // rather than one more deferral per fire and open period.
      await settledWithin(o.probe.settled, this.config.originMaxWaitMs);
      decision = o.breaker.check(this.clock.now());
    }
    if (!decision.pass) return this.deferred(decision.reason, decision.until, `${decision.reason}: ${key} until ${new Date(decision.until).toISOString()}`);
    const probe = decision.probe;
    if (probe) o.probe = pending();
    const release = await o.limiter.acquire(this.config.originMaxWaitMs);
    const waitedMs = this.clock.now() - now;
    if (release === null) {
      if (probe) {
        o.breaker.cancelProbe();
        this.probeSettled(o);
      }
      return this.deferred('origin_busy', this.clock.now() + 1_000, `origin_busy: ${key} had no free slot of ${this.config.originConcurrency} within ${waitedMs} ms`);
    }
    o.calls++;
    return {
      go: true,
      waitedMs,
      done: (result) => {
        release();
        const at = this.clock.now();
        o.lastUsed = at;
        const before = o.breaker.state;
        o.breaker.record(at, verdictOf(result), probe, result.retryAfterMs);
        if (probe) this.probeSettled(o);
        if (o.breaker.state === CircuitState.Open && (before !== CircuitState.Open || probe)) this.metrics.circuitOpened.inc();
        return o.breaker.notBefore(at);
      },
      // No call was made: the slot is free again and the origin's state learns nothing.
      cancel: () => {
        release();
        o.calls--;
        if (probe) {
          o.breaker.cancelProbe();
          this.probeSettled(o);
        }
      },
    };
  }

  private probeSettled(o: Origin): void {
    o.probe?.resolve();
    o.probe = null;
  }

  private deferred(reason: DeferralReason, until: number, error: string): OriginGate {
    this.metrics.deferred.inc({ reason });
    return { go: false, reason, until, result: { ok: false, costMs: 0, error, retryable: true } };
  }

  private origin(key: string, now: number): Origin {
    this.sweep(now);
    let o = this.origins.get(key);
    if (!o) {
      o = {
        breaker: new OriginBreaker({ failures: this.config.circuitFailures, openMs: this.config.circuitOpenMs, retryAfterMaxMs: this.config.retryAfterMaxMs }),
        limiter: new OriginLimiter(this.config.originConcurrency, () => this.clock.now(), ORIGIN_RAMP),
        calls: 0,
        lastUsed: now,
        probe: null,
      };
      this.origins.set(key, o);
    }
    o.lastUsed = now;
    return o;
  }

  /** Bounded memory: origins idle for ORIGIN_IDLE_MS with nothing to remember are dropped (a walk at most once a minute). */
  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [key, o] of this.origins) {
      if (now - o.lastUsed > ORIGIN_IDLE_MS && o.breaker.idle(now) && o.limiter.inFlight === 0 && o.limiter.waiting === 0) this.origins.delete(key);
    }
  }

  /** At scrape time: the top origins by calls by name, the worst state of the rest as `other`. */
  private exportState(): void {
    const g = this.metrics.circuitState;
    g.reset();
    const ranked = [...this.origins.entries()].sort((a, b) => b[1].calls - a[1].calls);
    for (const [key, o] of ranked.slice(0, TOP_ORIGINS)) g.set({ origin: key }, o.breaker.state);
    if (ranked.length > TOP_ORIGINS) g.set({ origin: 'other' }, ranked.slice(TOP_ORIGINS).reduce((m, [, o]) => Math.max(m, o.breaker.state), 0));
    this.metrics.appsActive.set(this.shares.active(this.clock.now()));
  }
}

function pending(): { settled: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const settled = new Promise<void>((r) => (resolve = r));
  return { settled, resolve };
}

/** Resolves when `p` does or after `ms`, whichever comes first. */
async function settledWithin(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** Origins of URLs seen, by URL: every fire asks twice (`wouldGoNow`, `enter`), and a timer calls the same URL every fire. */
const origins = new Map<string, string | null>();
/** URLs whose origin is remembered; templated URLs differ per fire, so the map is emptied when full. */
const ORIGINS_KEPT = 10_000;

/** `scheme://host:port` of a callback URL (the default port spelled out), null when it is not a URL. */
export function originOf(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  let key = origins.get(url);
  if (key === undefined) {
    key = parseOrigin(url);
    if (origins.size >= ORIGINS_KEPT) origins.clear();
    origins.set(url, key);
  }
  return key;
}

function parseOrigin(url: string): string | null {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : '');
    return `${u.protocol}//${u.hostname}${port ? `:${port}` : ''}`;
  } catch {
    return null;
  }
}
