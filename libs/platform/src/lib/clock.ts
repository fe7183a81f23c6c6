/**
 * Source of "now" (UTC epoch ms) and of waiting, injected by the CLOCK token so tests can fix the
 * time instead of sleeping. Services that only read the time depend on {@link NowClock}.
 */
export interface Clock {
  now(): number;
  /** Resolves after `ms` (at once for ms <= 0). */
  sleep(ms: number): Promise<void>;
}

export type NowClock = Pick<Clock, 'now'>;

export const CLOCK = Symbol('CLOCK');

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()),
};
