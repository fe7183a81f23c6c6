/**
 * A `Retry-After` header value (RFC 9110 10.2.3) as a delay in ms from `nowMs`: delta-seconds
 * (`120`) or an HTTP date. Undefined when absent or unreadable; a date in the past is 0. The caller
 * caps it: a receiver must not be able to stop its own deliveries for ever.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  // Only the date forms: Date.parse would also take "1.5" or "tomorrow"-like strings some engines accept.
  if (!/^[A-Za-z]{3},? /.test(raw) && !/^[A-Za-z]+day, /.test(raw)) return undefined;
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}
