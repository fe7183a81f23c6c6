/** Releases one slot; idempotent. */
export type Release = () => void;

/**
 * At most `limit` calls to one origin at a time from this process. A caller waits in FIFO order for
 * at most `maxWaitMs`, then gets null (the caller defers the fire): a waiting fire holds a handler and
 * its claim, so the wait is bounded (by the lease's spare time, see DeliveryControl).
 */
export class OriginLimiter {
  private active = 0;
  private readonly waiters: { grant: (r: Release | null) => void; timer?: NodeJS.Timeout }[] = [];

  constructor(private readonly limit: number) {}

  get inFlight(): number {
    return this.active;
  }
  get waiting(): number {
    return this.waiters.length;
  }

  acquire(maxWaitMs: number): Promise<Release | null> {
    if (this.active < this.limit && this.waiters.length === 0) return Promise.resolve(this.take());
    if (maxWaitMs <= 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: { grant: (r: Release | null) => void; timer?: NodeJS.Timeout } = { grant: resolve };
      waiter.timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      }, maxWaitMs);
      this.waiters.push(waiter);
    });
  }

  private take(): Release {
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const next = this.waiters.shift();
      if (next) {
        clearTimeout(next.timer);
        next.grant(this.take());
      }
    };
  }
}
