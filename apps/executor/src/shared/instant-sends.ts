import { Inject, Injectable, Optional } from '@nestjs/common';
import { Clock, CLOCK, systemClock } from '@timer/platform';

/** A due instant's burst counts as going on for at most this long after the instant (a slow origin's calls do not prolong it). */
export const BURST_MAX_MS = 500;

/**
 * Which due instants' calls are still going on: a fire that reached its time counts until its call is
 * answered (or it ended without one), for at most {@link BURST_MAX_MS} after its instant. Work that can
 * wait (outcome writes: OutcomeRecorder) waits for it, so the CPU the executor, MariaDB and the
 * receiver share goes to the calls then.
 */
@Injectable()
export class InstantSends {
  /** Calls not answered yet, by their instant. */
  private readonly open = new Map<number, number>();
  private idle: (() => void)[] = [];
  private readonly clock: Clock;

  constructor(@Optional() @Inject(CLOCK) clock?: Clock) {
    this.clock = clock ?? systemClock;
  }

  /** A fire due at `instant` reached it; the returned function says its call was answered (or it ended without one). Idempotent. */
  begin(instant: number): () => void {
    this.open.set(instant, (this.open.get(instant) ?? 0) + 1);
    let live = true;
    return () => {
      if (!live) return;
      live = false;
      const left = (this.open.get(instant) ?? 1) - 1;
      if (left > 0) {
        this.open.set(instant, left);
        return;
      }
      this.open.delete(instant);
      if (this.idle.length === 0 || this.busy) return;
      const resume = this.idle;
      this.idle = [];
      for (const r of resume) r();
    };
  }

  get busy(): boolean {
    const now = this.clock.now();
    let busy = false;
    for (const at of this.open.keys()) {
      if (now - at < BURST_MAX_MS) busy = true;
      else this.open.delete(at); // over: its late answers find nothing to count down
    }
    return busy;
  }

  /** Resolves once no instant's burst is going on, or after `maxMs`. */
  whenIdle(maxMs: number): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
