/**
 * Minute and window arithmetic every role agrees on. Time inside the system is UTC epoch ms; a minute
 * is the unit of the slice index and of the scheduler's offers, a window (step1) the unit of the
 * migrator's expansion and of the api's pre-creation on enable.
 */

export const MINUTE_MS = 60_000;

/** Default length of a migrator window (`TIMER_WINDOW_MINUTES`), in minutes. */
export const DEFAULT_WINDOW_MINUTES = 60;

/**
 * Windows after the current one whose fires must exist at any time: enable pre-creates them and every
 * migrator tick prepares them, so a migrator outage of up to this many windows loses nothing.
 */
export const WINDOWS_AHEAD = 2;

/**
 * A fire due within this long of its creation may already be behind the trigger's walk (the walk
 * publishes each step TIMER_TRIGGER_LEAD_MS before it starts): whoever creates such a fire (run now,
 * enable, the migrator's catch-up) publishes its task message itself instead of leaving it to the
 * walk. The trigger refuses a lead + step longer than this.
 */
export const NEAR_NOW_MS = 2_000;

/** One window [start, end), epoch ms UTC. */
export interface Window {
  start: number;
  end: number;
}

/** The start (epoch ms) of the UTC minute containing `ms`. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}

/** True when `ms` is the first instant of a UTC minute. */
export function isMinuteStart(ms: number): boolean {
  return Number.isSafeInteger(ms) && ms % MINUTE_MS === 0;
}

/** The UTC-aligned window of `windowMs` containing `ms`: [start, start + windowMs). */
export function windowOf(ms: number, windowMs: number): Window {
  if (!Number.isFinite(ms)) throw new RangeError(`ms must be a finite epoch ms, got ${ms}`);
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) throw new RangeError('windowMs must be a positive integer');
  const start = Math.floor(ms / windowMs) * windowMs;
  return { start, end: start + windowMs };
}

/**
 * The windows whose fires must exist at `now`: the current one and the next {@link WINDOWS_AHEAD}.
 * `until` is the end of the last of them (exclusive).
 */
export function preparedWindows(now: number, windowMs: number): { from: number; until: number; windows: Window[] } {
  const current = windowOf(now, windowMs).start;
  const windows: Window[] = [];
  for (let i = 0; i <= WINDOWS_AHEAD; i++) windows.push({ start: current + i * windowMs, end: current + (i + 1) * windowMs });
  return { from: current, until: current + (WINDOWS_AHEAD + 1) * windowMs, windows };
}
