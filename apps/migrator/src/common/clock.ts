/** Source of "now" (UTC epoch ms). Injected by token so tests can fix the time instead of sleeping. */
export interface Clock {
  now(): number;
}

export const CLOCK = Symbol('CLOCK');

export const systemClock: Clock = { now: () => Date.now() };
