import { Backoff } from './backoff';
import { PulsarAdminError, PulsarConnectError } from './errors';
import type { PulsarLogger } from './pulsar-client.interface';

export interface RetryUntilOptions {
  /** What is attempted, for the log line ("provisioning timer/timer"). */
  what: string;
  /** Give up once the next attempt would start after this much time (ms); 0 = one attempt. */
  timeoutMs: number;
  logger?: PulsarLogger;
  /** Stop retrying (e.g. the process is shutting down). */
  cancelled?: () => boolean;
}

/**
 * Whether an error may heal by waiting: no answer, a 5xx / 408 / 412 / 429, or anything not from this
 * library (a network error). A 4xx is a wrong request and fails at once.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof PulsarConnectError) return error.retryable;
  // 412: the broker refused a concurrent change of the same resource (e.g. a subscription being created).
  if (error instanceof PulsarAdminError) return error.status === 0 || error.status >= 500 || [408, 412, 429].includes(error.status);
  return true;
}

/**
 * Runs `fn` until it succeeds, retrying transient failures with capped exponential backoff for up
 * to `timeoutMs`: a role that starts while the broker restarts waits for it instead of crash-looping,
 * and notices it back within about a second (the cap), however long it was away.
 */
export async function retryUntil<T>(fn: () => Promise<T>, options: RetryUntilOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const backoff = new Backoff(250, 1_000);
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const delay = backoff.next();
      if (!isTransient(error) || options.cancelled?.() || Date.now() + delay > deadline) throw error;
      options.logger?.warn(`${options.what} failed (attempt ${backoff.attempts}): ${(error as Error).message}; retrying in ${delay} ms`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
