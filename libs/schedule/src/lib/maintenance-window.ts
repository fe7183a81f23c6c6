import { previousFireTime } from './previous-fire';
import { nextFireTimes } from './schedule';

export const MAINTENANCE_POLICIES = ['skip', 'defer'] as const;
export type MaintenancePolicy = (typeof MAINTENANCE_POLICIES)[number];
/** Bounds of a recurring window's `durationMs`. */
export const MAINTENANCE_MIN_DURATION_MS = 1_000;
export const MAINTENANCE_MAX_DURATION_MS = 7 * 86_400_000;

/**
 * A maintenance window of an app: fixed (`fromMs` <= run_at < `toMs`) or recurring (each start of
 * `cron`, evaluated in UTC, opens it for `durationMs`). `timerIds` null covers every timer of the app.
 */
export interface MaintenanceWindow {
  id: string;
  app: string;
  timerIds: string[] | null;
  fromMs: number | null;
  toMs: number | null;
  cron: string | null;
  durationMs: number | null;
  policy: MaintenancePolicy;
}

/** The occurrence of a window a fire falls in: [start, end). */
export interface WindowHit {
  window: MaintenanceWindow;
  start: number;
  end: number;
}

/** The occurrence of `w` that holds `runAt` (start <= runAt < end), if any. */
export function windowAt(w: MaintenanceWindow, runAt: number): WindowHit | null {
  if (w.cron !== null && w.durationMs !== null) {
    // The last start at or before runAt (previousFireTime is strict, hence + 1).
    const start = previousFireTime({ cron: w.cron, timeZone: 'UTC' }, runAt + 1);
    return start !== undefined && start + w.durationMs > runAt ? { window: w, start, end: start + w.durationMs } : null;
  }
  if (w.fromMs !== null && w.toMs !== null && w.fromMs <= runAt && runAt < w.toMs) return { window: w, start: w.fromMs, end: w.toMs };
  return null;
}

/**
 * The window covering a fire of `timerId` at `runAt`, among an app's windows. When several do, a
 * `skip` one wins (nothing is delivered for it), else the one ending last (a deferred fire lands after
 * every covering window).
 */
export function coveringWindow(windows: readonly MaintenanceWindow[], timerId: string, runAt: number): WindowHit | null {
  let best: WindowHit | null = null;
  for (const w of windows) {
    if (w.timerIds !== null && !w.timerIds.includes(timerId)) continue;
    const hit = windowAt(w, runAt);
    if (!hit) continue;
    if (!best || rank(hit) > rank(best)) best = hit;
  }
  return best;
}

function rank(h: WindowHit): number {
  return (h.window.policy === 'skip' ? Number.MAX_SAFE_INTEGER / 2 : 0) + h.end;
}

/** Whether the window can still cover a fire at or after `nowMs` (a fixed one that ended cannot). */
export function windowLasts(w: MaintenanceWindow, nowMs: number): boolean {
  if (w.cron !== null) return true;
  return w.toMs !== null && w.toMs > nowMs;
}

/** The next start of a recurring window after `afterMs` (for listings); null for a fixed one. */
export function nextWindowStart(w: MaintenanceWindow, afterMs: number): number | null {
  if (w.cron === null) return null;
  return nextFireTimes({ cron: w.cron, timeZone: 'UTC' }, afterMs, 1)[0] ?? null;
}
