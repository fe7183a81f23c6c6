/** Releases one slot; idempotent. */
export type Release = () => void;

/** A new origin's limit: `start` calls at once, doubled every `stepMs` until the full limit. */
export interface RampSettings {
  start: number;
  stepMs: number;
}

interface Waiter {
  grant: (r: Release | null) => void;
  timer?: NodeJS.Timeout;
}

/**
 * At most `limit` calls to one origin at a time from this process. A caller waits in FIFO order for
 * at most `maxWaitMs`, then gets null (the caller defers the fire): a waiting fire holds a handler and
 * its claim, so the wait is bounded (by the lease's spare time, see DeliveryControl).
 *
 * With `ramp`, a new limiter (a new origin, or one forgotten after being idle) starts at `ramp.start`
 * and doubles every `ramp.stepMs`: a first burst of hundreds of fires to an origin opens its
 * connections over a few hundred milliseconds instead of all at the instant other fires are due.
 */
export class OriginLimiter {
  private active = 0;
  private readonly waiters: Waiter[] = [];
  private readonly createdAt: number;
  private rampTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
    private readonly ramp?: RampSettings,
  ) {
    this.createdAt = now();
  }

  get inFlight(): number {
    return this.active;
  }
  get waiting(): number {
    return this.waiters.length;
  }

  /** The limit in force now (below `limit` while a new origin's ramp runs). */
  currentLimit(): number {
    if (!this.ramp) return this.limit;
    const steps = Math.max(0, Math.floor((this.now() - this.createdAt) / this.ramp.stepMs));
    return Math.min(this.limit, Math.max(1, this.ramp.start) * 2 ** Math.min(steps, 30));
  }

  acquire(maxWaitMs: number): Promise<Release | null> {
    if (this.active < this.currentLimit() && this.waiters.length === 0) return Promise.resolve(this.take());
    if (maxWaitMs <= 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = { grant: resolve };
      waiter.timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      }, maxWaitMs);
      this.waiters.push(waiter);
      this.awaitRamp();
    });
  }

  private take(): Release {
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.grant();
    };
  }

  /** Hands free slots to the waiters, oldest first. */
  private grant(): void {
    while (this.waiters.length > 0 && this.active < this.currentLimit()) {
      const next = this.waiters.shift()!;
      clearTimeout(next.timer);
      next.grant(this.take());
    }
  }

  /** While the ramp holds waiters back, looks again at its next step. */
  private awaitRamp(): void {
    if (!this.ramp || this.rampTimer || this.currentLimit() >= this.limit) return;
    const stepMs = this.ramp.stepMs;
    this.rampTimer = setTimeout(() => {
      this.rampTimer = undefined;
      this.grant();
      if (this.waiters.length > 0) this.awaitRamp();
    }, stepMs - ((this.now() - this.createdAt) % stepMs));
    this.rampTimer.unref?.();
  }
}
