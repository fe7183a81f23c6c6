/** Source of "now" (UTC epoch ms) and of waiting. Injected by token so tests can fix the time. */
export interface TriggerClock {
  now(): number;
  /** Resolves after `ms` (at once for ms <= 0). */
  sleep(ms: number): Promise<void>;
}

export const TRIGGER_CLOCK = Symbol('TRIGGER_CLOCK');

export const systemClock: TriggerClock = {
  now: () => Date.now(),
  sleep: (ms) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()),
};
