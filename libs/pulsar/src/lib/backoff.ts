/**
 * Exponential backoff with jitter and a cap: delay n is `initial * 2^n`, capped at `max`, of which
 * the last `jitter` fraction is random so that many clients reconnecting at once spread out.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    private readonly jitter = 0.3,
    private readonly random: () => number = Math.random,
  ) {
    if (!(initialMs > 0) || !(maxMs >= initialMs)) {
      throw new RangeError(`invalid backoff: initial ${initialMs} ms, max ${maxMs} ms`);
    }
  }

  /** Attempts made since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** The delay before the next attempt (ms); each call grows the next one. */
  next(): number {
    // 2^attempt overflows nothing before the cap applies: stop growing once past it.
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 40));
    this.attempt++;
    const fixed = base * (1 - this.jitter);
    return Math.round(fixed + this.random() * (base - fixed));
  }

  reset(): void {
    this.attempt = 0;
  }
}
