/**
 * Source of "now" (UTC epoch ms) and of waiting. Injected by token so tests can fix the time instead
 * of sleeping.
 */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const CLOCK = Symbol('CLOCK');

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};
