import { Clock } from '@timer/platform';

/**
 * Waits for instants, one timer per instant: the fires of one second are due at the same
 * millisecond, and a timer each (its duration computed from a slightly different now, so a timer
 * list each in Node) cost more than the wait itself at thousands of fires a second.
 */
export class InstantWaits {
  private readonly waits = new Map<number, Promise<void>>();

  constructor(private readonly clock: Clock) {}

  /** Resolves at `at` (epoch ms), at once when it has passed. */
  until(at: number): Promise<void> {
    let wait = this.waits.get(at);
    if (!wait) {
      const ms = at - this.clock.now();
      if (ms <= 0) return Promise.resolve();
      wait = this.clock.sleep(ms).then(() => {
        this.waits.delete(at);
      });
      this.waits.set(at, wait);
    }
    return wait;
  }
}
