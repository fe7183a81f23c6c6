/**
 * Last line of defence before a log line is written: shapes that carry secrets are masked whatever
 * produced the text (a driver's error message, a stack, a URL in a warning). Callers still must not
 * log request bodies, callback headers or SQL parameters in the first place.
 */
const PATTERNS: [RegExp, string][] = [
  // Passwords in URLs: mysql://user:secret@host, https://user:secret@receiver.
  [/([a-z][a-z0-9+.-]*:\/\/[^\s/:@'"]*):[^\s@'"]*@/gi, '$1:***@'],
  // Bearer tokens (Authorization header values echoed in an error).
  [/\b(Bearer)\s+[^\s'",;]+/gi, '$1 ***'],
  // TypeORM's "query failed: ... -- PARAMETERS: [...]" appends every bound value.
  [/\s*--\s*PARAMETERS:[\s\S]*$/g, ''],
  // MySQL messages quoting a row's values: "Duplicate entry 'a-b' for key", "Incorrect string value: '\xF0'".
  [/\b(Duplicate entry|value:?|data for column)\s+'(?:[^'\\]|\\.|'')*'/gi, "$1 '?'"],
];

/** `text` with URL passwords, bearer tokens, SQL parameters and quoted row values masked. */
export function redact(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Keys whose values are never logged, in whatever object reaches the logger. */
const SECRET_KEYS = /^(parameters|sql|password|passwd|token|authorization|body|headers?|secret|signingSecret|notifyHttpParam|notify_http_param)$/i;

/**
 * A log argument made safe to print: an Error becomes its (redacted) name, message and stack, which
 * leaves out the properties drivers attach (TypeORM's `parameters`, mysql2's `sql` with the values
 * inlined); an object loses its secret-named keys; strings are redacted.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (value instanceof Error) return redact(value.stack ?? `${value.name}: ${value.message}`);
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  if (value instanceof Map || value instanceof Set || Buffer.isBuffer(value)) return `[${value.constructor.name}]`;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? '***' : redactValue(v, depth + 1);
  return out;
}
