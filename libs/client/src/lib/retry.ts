/** When to try a refused request again: 429 and 503 only, after the `Retry-After` the api sends. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** A `Retry-After` longer than this (ms) is not waited for: the error is thrown (default 30,000). */
  maxDelayMs?: number;
  /** Wait when a 503 has no usable `Retry-After` (ms, default 1,000). */
  defaultDelayMs?: number;
}

export const RETRY_DEFAULTS: Required<RetryOptions> = { maxRetries: 3, maxDelayMs: 30_000, defaultDelayMs: 1_000 };

/** The statuses the api answers when nothing was done and the same request may be sent again. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * `Retry-After` in ms: delay-seconds (`"2"`) or an HTTP date (RFC 9110 10.2.3), a past date as 0;
 * undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[A-Za-z]/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * How long to wait before retry number `retry` (1-based) of an answer with `status`, or undefined when
 * it is not retried: not a 429/503, the retries are used up, the api asks for longer than the cap, or
 * a 429 without `Retry-After` (a quota refusal, which waiting does not lift; the rate limits send one).
 */
export function retryDelay(status: number, retryAfterMs: number | undefined, retry: number, options: Required<RetryOptions>): number | undefined {
  if (!RETRYABLE_STATUSES.has(status) || retry > options.maxRetries) return undefined;
  if (status === 429 && retryAfterMs === undefined) return undefined;
  const delay = retryAfterMs ?? options.defaultDelayMs;
  return delay > options.maxDelayMs ? undefined : delay;
}
