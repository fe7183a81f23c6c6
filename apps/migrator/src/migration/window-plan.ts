import { preparedWindows, Window, windowOf } from '@timer/contracts';

export type { Window };

export interface WindowPlanInput {
  now: number;
  windowMs: number;
  /** Fires older than now - catchUpMs are never created (no trigger would walk them). */
  catchUpMs: number;
  /** Earliest and latest completed windows ever recorded, or null when none was. */
  bounds: { first: number; last: number } | null;
  /** Completed window starts within the planned range. */
  completed: ReadonlySet<number>;
}

export interface WindowPlan {
  /** Windows to work, ascending, none of them completed. */
  windows: Window[];
  /** The first window the plan considers (the query range of `completed` starts here). */
  from: number;
  /** The last window the plan considers (the last of `preparedWindows`). */
  to: number;
  /** Windows after the last completed one that fell behind the catch-up horizon (downtime), if any. */
  skipped?: { from: number; to: number };
}

/**
 * The range of windows a tick must cover, before knowing which are completed: from the catch-up
 * horizon (or the current window when nothing was ever completed) through the last prepared window.
 */
export function planRange(now: number, windowMs: number, catchUpMs: number, bounds: WindowPlanInput['bounds']): { from: number; to: number } {
  const prepared = preparedWindows(now, windowMs);
  const current = prepared.from;
  const to = prepared.windows[prepared.windows.length - 1].start;
  if (bounds === null) return { from: current, to };
  // Never before the catch-up horizon (older fires are beyond the scheduler's lookback), never before
  // the first window ever completed (the migrator's history starts there: what came before was not
  // its job), never after the current window.
  const horizon = windowOf(now - catchUpMs, windowMs).start;
  return { from: Math.min(current, Math.max(horizon, bounds.first)), to };
}

/**
 * Every window from the last completed one through the last prepared window that is not completed.
 * Gaps between completed windows (a replica that died holding a window while another completed the
 * next) are included, so a window is never left behind because a later one completed.
 */
export function planWindows(input: WindowPlanInput): WindowPlan {
  const { windowMs, bounds, completed } = input;
  const { from, to } = planRange(input.now, windowMs, input.catchUpMs, bounds);
  const windows: Window[] = [];
  for (let start = from; start <= to; start += windowMs) {
    if (!completed.has(start)) windows.push({ start, end: start + windowMs });
  }
  const plan: WindowPlan = { windows, from, to };
  if (bounds !== null && bounds.last + windowMs < from) plan.skipped = { from: bounds.last + windowMs, to: from };
  return plan;
}

/**
 * Where a timer's fires written with a window start: at its `next_fire_at` (every fire before it
 * exists; below the window's start when a window before this one has not been expanded for it, so
 * nothing is lost whichever replica gets there first; the window's start when not known), never
 * before the timer's last change (a timer enabled mid-window must not get the fires it had before it
 * was enabled; the api pre-created those after it), never older than the catch-up horizon.
 */
export function firesFrom(window: Window, nextFireAt: number | null, timerChangedAt: number, now: number, catchUpMs: number): number {
  const cursor = nextFireAt !== null && nextFireAt > 0 ? nextFireAt : window.start;
  const changed = Number.isFinite(timerChangedAt) ? timerChangedAt : window.start;
  return Math.max(cursor, changed, now - catchUpMs);
}

export function isoWindow(w: Window): string {
  return `[${new Date(w.start).toISOString()}, ${new Date(w.end).toISOString()})`;
}
