/** A timer id on the wire: the decimal form of an unsigned 64-bit row id. */
const TIMER_ID = /^\d{1,20}$/;

/** One fire: its timer and scheduled instant (epoch ms UTC). Its identity everywhere. */
export interface FireRef {
  timerId: string;
  runAt: number;
}

export function isTimerId(value: unknown): value is string {
  return typeof value === 'string' && TIMER_ID.test(value);
}

/**
 * The fire id: `<timerId>-<runAtMs>`. The same across retries; carried in task messages, message
 * properties, the `X-Timer-Fire-Id` callback header, the slice index members and the records API.
 */
export function fireId(timerId: string, runAt: number): string {
  return `${timerId}-${runAt}`;
}

/** The fire id of a {@link FireRef}. */
export function formatFireId(ref: FireRef): string {
  return fireId(ref.timerId, ref.runAt);
}

/** What every fire id of a timer starts with (for prefix scans). */
export function fireIdPrefix(timerId: string): string {
  return `${timerId}-`;
}

/** The fire a fire id names, or null when it is not one. */
export function parseFireId(id: string): FireRef | null {
  const dash = id.lastIndexOf('-');
  if (dash <= 0) return null;
  const timerId = id.slice(0, dash);
  const digits = id.slice(dash + 1);
  if (!isTimerId(timerId) || !/^\d{1,16}$/.test(digits)) return null;
  const runAt = Number(digits);
  return Number.isSafeInteger(runAt) ? { timerId, runAt } : null;
}
