import { RETRY_BACKOFF_CAP_MS, RETRY_JITTER } from '../shared/backoff';

/** The fields of a timer the deadline reads. */
export interface DeadlineRules {
  catchupWindowMs: number | null;
  backoffMs: number;
}

/**
 * The latest instant a fire the origin's state keeps refusing (origin busy, circuit open, Retry-After)
 * may still be sent (docs/behaviour.md, "Adaptive delivery"). A refusal uses no attempt, so attempts
 * cannot bound it; time does: its run_at, plus the longest its earlier attempts could have taken
 * (each retry's longest backoff and a callback timeout), plus its catch-up window (the timer's
 * `catchupWindowMs`, else TIMER_MISFIRE_WINDOW_MS) as the slack for every refusal of the fire together.
 */
export function unsentDeadline(t: DeadlineRules, runAt: number, attempt: number, globalWindowMs: number, callbackTimeoutMaxMs: number): number {
  let span = t.catchupWindowMs ?? globalWindowMs;
  for (let failed = 1; failed < attempt; failed++) span += longestRetryDelayMs(t.backoffMs, failed) + callbackTimeoutMaxMs;
  return runAt + span;
}

/** The upper end of `retryDelayMs`'s jitter for the attempt after `failedAttempt`. */
function longestRetryDelayMs(backoffMs: number, failedAttempt: number): number {
  const base = Math.max(0, backoffMs) * 2 ** Math.min(failedAttempt - 1, 60);
  return Math.min(RETRY_BACKOFF_CAP_MS, Math.ceil(Math.min(base, RETRY_BACKOFF_CAP_MS) * (1 + RETRY_JITTER)));
}
