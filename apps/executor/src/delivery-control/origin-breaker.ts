/** The state of one origin's circuit, as `timer_origin_circuit_state` exports it (0, 1, 2). */
export enum CircuitState {
  Closed = 0,
  HalfOpen = 1,
  Open = 2,
}

export interface BreakerSettings {
  /** Consecutive failures (network errors, timeouts, 5xx) that open the circuit. */
  failures: number;
  /** How long an open circuit refuses calls before one probe is let through. */
  openMs: number;
  /** The longest `Retry-After` honoured. */
  retryAfterMaxMs: number;
}

/** What one call's answer says about its origin: it answered (`healthy`, even a 4xx or 429) or it did not (`failure`). */
export type CallVerdict = 'healthy' | 'failure';

export type BreakerDecision =
  | { pass: true; probe: boolean }
  | { pass: false; reason: 'circuit_open' | 'retry_after'; until: number };

/** While a probe is out, the other fires of the origin come back after this (unless its answer is later). */
export const HALF_OPEN_RETRY_MS = 2_000;

/**
 * Memory of one origin across fires, in one executor process: a circuit breaker (closed -> open after
 * `failures` consecutive failures; open for `openMs`; then half-open: one probe call, which closes it
 * on success and opens it again on failure) and the receiver's `Retry-After` on 429/503 (capped),
 * before which nothing is sent. Times are the caller's clock; nothing here sleeps or schedules.
 */
export class OriginBreaker {
  private consecutiveFailures = 0;
  private openUntil = 0;
  private probing = false;
  private retryAfterUntil = 0;
  private state_ = CircuitState.Closed;

  constructor(private readonly s: BreakerSettings) {}

  get state(): CircuitState {
    return this.state_;
  }

  /** Whether a call may go now; a half-open circuit lets exactly one through (the probe). */
  check(now: number): BreakerDecision {
    if (now < this.retryAfterUntil) return { pass: false, reason: 'retry_after', until: this.retryAfterUntil };
    if (this.state_ === CircuitState.Open) {
      if (now < this.openUntil) return { pass: false, reason: 'circuit_open', until: this.openUntil };
      this.state_ = CircuitState.HalfOpen;
    }
    if (this.state_ === CircuitState.HalfOpen) {
      if (this.probing) return { pass: false, reason: 'circuit_open', until: now + HALF_OPEN_RETRY_MS };
      this.probing = true;
      return { pass: true, probe: true };
    }
    return { pass: true, probe: false };
  }

  /**
   * The answer of a call that `check` let through. `probe` must be what `check` said, so that a call
   * started before the circuit opened cannot close it again.
   */
  record(now: number, verdict: CallVerdict, probe: boolean, retryAfterMs?: number): void {
    if (retryAfterMs !== undefined) this.retryAfterUntil = Math.max(this.retryAfterUntil, now + Math.min(retryAfterMs, this.s.retryAfterMaxMs));
    if (probe) this.probing = false;
    if (verdict === 'healthy') {
      this.consecutiveFailures = 0;
      if (probe) this.state_ = CircuitState.Closed;
      return;
    }
    this.consecutiveFailures++;
    if (probe || (this.state_ === CircuitState.Closed && this.consecutiveFailures >= this.s.failures)) {
      this.state_ = CircuitState.Open;
      this.openUntil = now + this.s.openMs;
    }
  }

  /** The probe `check` let through was not sent after all: the next call may probe. */
  cancelProbe(): void {
    this.probing = false;
  }

  /** The earliest instant a call may go again (`now` when it may go now): what a retry waits for. */
  notBefore(now: number): number {
    const open = this.state_ === CircuitState.Open ? this.openUntil : 0;
    return Math.max(now, this.retryAfterUntil, open);
  }

  /** Nothing to remember: closed, no failure counted, no Retry-After pending, no probe out. */
  idle(now: number): boolean {
    return this.state_ === CircuitState.Closed && this.consecutiveFailures === 0 && now >= this.retryAfterUntil && !this.probing;
  }
}

/**
 * Which answers count against an origin: no answer (network error, timeout) or a 5xx. A 4xx is the
 * fire's own problem, and a refused private address never reached the network.
 */
export function verdictOf(result: { status?: number; retryable: boolean }): CallVerdict {
  return result.retryable && (result.status === undefined || result.status >= 500) ? 'failure' : 'healthy';
}
