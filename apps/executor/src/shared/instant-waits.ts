import { Clock } from '@timer/platform';

/**
 * Waiters released per event-loop turn when several groups (apps) wait for the same instant: the
 * claims, bloom look-ups and call marks of what was released go out between two turns, and the rest
 * waits for the next one.
 */
export const RELEASE_CHUNK = 64;

/**
 * The part of each second where work that no fire waits for is done (hand-backs of an app over its
 * share, calls its origin refused): from this offset, for {@link QUIET_SPAN_MS}. Fires of cron
 * schedules are due at whole seconds (the second is cron's finest unit), and their claims start
 * about 100 ms before (the lane lead) and their calls and first completions run just after.
 */
export const QUIET_FROM_MS = 250;
export const QUIET_SPAN_MS = 500;

/** When work put off to the quiet part of a second may run: undefined when `now` is in it, else its next start. */
export function quietAt(now: number): number | undefined {
  const ms = ((now % 1000) + 1000) % 1000;
  if (ms >= QUIET_FROM_MS && ms < QUIET_FROM_MS + QUIET_SPAN_MS) return undefined;
  return now - ms + QUIET_FROM_MS + (ms < QUIET_FROM_MS ? 0 : 1000);
}

/** The waiters of one instant, by group, in arrival order. */
type Instant = Map<string, (() => void)[]>;

/**
 * Waits for instants, one timer per instant: the fires of one second are due at the same millisecond,
 * and a Node timer each cost more than the wait itself.
 *
 * Waiters given a group (the fire's app) are released in turns when several groups wait for one
 * instant: {@link RELEASE_CHUNK} per event-loop turn, one of each group in rotation, the smallest group
 * first, so a heavy app's fires do not delay a light app's claims past the instant
 * (docs/benchmarks.md, "Measurements behind the code").
 */
export class InstantWaits {
  private readonly waits = new Map<number, Promise<void>>();
  private readonly grouped = new Map<number, Instant>();

  constructor(private readonly clock: Clock) {}

  /** Resolves in the quiet part of the second ({@link quietAt}): at once when in it. */
  quiet(): Promise<void> {
    const at = quietAt(this.clock.now());
    return at === undefined ? Promise.resolve() : this.until(at);
  }

  /** Resolves at `at` (epoch ms), at once when it has passed; `group`: released in turns with the other groups of the instant. */
  until(at: number, group?: string): Promise<void> {
    if (group !== undefined) return this.inGroup(at, group);
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

  private inGroup(at: number, group: string): Promise<void> {
    let instant = this.grouped.get(at);
    if (!instant) {
      const ms = at - this.clock.now();
      if (ms <= 0) return Promise.resolve();
      instant = new Map();
      this.grouped.set(at, instant);
      void this.clock.sleep(ms).then(() => this.release(at));
    }
    const waiters = instant.get(group);
    return new Promise<void>((resolve) => {
      if (waiters) waiters.push(resolve);
      else instant.set(group, [resolve]);
    });
  }

  private release(at: number): void {
    const instant = this.grouped.get(at);
    this.grouped.delete(at);
    if (!instant) return;
    if (instant.size === 1) {
      for (const waiters of instant.values()) for (const resolve of waiters) resolve();
      return;
    }
    const queues = [...instant.values()].sort((a, b) => a.length - b.length).map((waiters) => ({ waiters, next: 0 }));
    let turn = 0;
    const step = (): void => {
      let released = 0;
      while (released < RELEASE_CHUNK && queues.length > 0) {
        if (turn >= queues.length) turn = 0;
        const q = queues[turn];
        q.waiters[q.next++]();
        released++;
        if (q.next === q.waiters.length) queues.splice(turn, 1);
        else turn++;
      }
      if (queues.length > 0) setImmediate(step);
    };
    step();
  }
}
