/** No retry waits longer than this. */
export const RETRY_BACKOFF_CAP_MS = 3_600_000;
/** Relative jitter of a retry delay: +/- 20 %. */
export const RETRY_JITTER = 0.2;

/**
 * Delay before the attempt after `failedAttempt` (1-based): `backoffMs * 2^(failedAttempt-1)`, with
 * +/-20 % jitter so failures of many fires at once do not retry in lock step, capped at one hour.
 */
export function retryDelayMs(backoffMs: number, failedAttempt: number, random: () => number = Math.random): number {
  const base = Math.max(0, backoffMs) * 2 ** Math.max(0, failedAttempt - 1);
  const jittered = Math.min(base, RETRY_BACKOFF_CAP_MS) * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random());
  return Math.min(RETRY_BACKOFF_CAP_MS, Math.round(jittered));
}
