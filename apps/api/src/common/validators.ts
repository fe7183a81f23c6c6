import { applyDecorators } from '@nestjs/common';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IsString, Matches, ValidateBy, ValidationOptions } from 'class-validator';

/** RFC 7230 `token`: the characters a header field name may use. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What Node's HTTP client accepts in a header value: no CR, LF, NUL or other control characters. */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** App names: also the key of rate limits and Redis keys, so a small safe alphabet. */
export const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const APP_MESSAGE = 'app must be 1-64 characters of letters, digits, "_", "." or "-", starting with a letter or digit';

/** An `app` field: a string matching APP_NAME, one message naming the field either way. */
export const IsAppName = (): PropertyDecorator => applyDecorators(IsString({ message: APP_MESSAGE }), Matches(APP_NAME, { message: APP_MESSAGE }));
/** Timer ids are unsigned BIGINT auto-increments; accepted as a JSON number or a digit string. */
export const TIMER_ID = /^[1-9][0-9]{0,18}$/;

export const MAX_HEADERS = 64;
export const MAX_HEADER_VALUES = 16;
export const MAX_HEADER_VALUE_LENGTH = 8192;
export const MAX_URL_LENGTH = 2048;

/**
 * Headers the service sets itself or that would corrupt the request framing: a timer may not set them.
 * `X-Timer-*` are the delivery headers (fire id, attempt, signature) and must not be spoofed.
 */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection', 'expect']);

/**
 * The JSON Schema of a header map's values ({@link headerMapProblem}; OpenAPI 3.0 has no keyword for the
 * names, which its descriptions state): what the document says of `header` and `headers`.
 */
export const HEADER_MAP_SCHEMA: { type: 'object'; maxProperties: number; additionalProperties: SchemaObject } = {
  type: 'object',
  maxProperties: MAX_HEADERS,
  additionalProperties: {
    oneOf: [
      { type: 'string', maxLength: MAX_HEADER_VALUE_LENGTH, pattern: HEADER_VALUE.source },
      { type: 'array', minItems: 1, maxItems: MAX_HEADER_VALUES, items: { type: 'string', maxLength: MAX_HEADER_VALUE_LENGTH, pattern: HEADER_VALUE.source } },
    ],
  },
};

/** Why a `notifyHTTPParam.header` value is not a `map[string][]string` we can send, or undefined. */
export function headerMapProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object mapping header names to arrays of strings';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) return `must have at most ${MAX_HEADERS} headers`;
  for (const [name, values] of entries) {
    if (!HEADER_NAME.test(name)) return `name ${JSON.stringify(name.slice(0, 64))} is not a valid header name (RFC 7230 token)`;
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-timer-')) return `${name} is set by the service and may not be given`;
    const list = typeof values === 'string' ? [values] : values;
    if (!Array.isArray(list) || list.length === 0) return `${name} must be a non-empty array of strings`;
    if (list.length > MAX_HEADER_VALUES) return `${name} must have at most ${MAX_HEADER_VALUES} values`;
    for (const v of list) {
      if (typeof v !== 'string') return `${name} values must be strings`;
      if (v.length > MAX_HEADER_VALUE_LENGTH) return `${name} value is longer than ${MAX_HEADER_VALUE_LENGTH} characters`;
      if (!HEADER_VALUE.test(v)) return `${name} value must not contain CR, LF or other control or non-Latin-1 characters`;
    }
  }
  return undefined;
}

/** Normalises a validated header map: a single string becomes a one-element array. */
export function normalizeHeaderMap(value: Record<string, string | string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(value)) out[name] = typeof values === 'string' ? [values] : [...values];
  return out;
}

export function IsHeaderMap(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHeaderMap',
      validator: {
        validate: (value: unknown) => headerMapProblem(value) === undefined,
        defaultMessage: (args) => `${args?.property ?? 'header'}: ${headerMapProblem(args?.value) ?? 'invalid'}`,
      },
    },
    options,
  );
}

/**
 * Why a callback URL is unusable (syntax only; the private-address rule needs config), or undefined.
 * Checked on the raw string: the URL parser silently drops TAB, CR and LF, but the raw string is what
 * is stored and called. Credentials in the URL (`user:pass@`) are refused: they would be stored and
 * shown in clear, and a header (`Authorization`) says the same thing explicitly.
 */
export function urlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (/[\x00-\x1f\x7f]/.test(value)) return 'must not contain control characters (CR, LF, TAB, ...)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL';
  if (!url.hostname) return 'must name a host';
  // Also an empty `@` (the parser drops it, the raw string keeps it); a backslash ends the authority like `/`.
  if (url.username || url.password || /^[a-z][a-z0-9+.-]*:[/\\]*[^/?#\\]*@/i.test(value)) {
    return 'must not contain credentials (user:password@); send them in notifyHTTPParam.header (e.g. Authorization)';
  }
  if (url.port === '0') return 'must not use port 0';
  return undefined;
}

export function IsCallbackUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCallbackUrl',
      validator: {
        validate: (value: unknown) => urlProblem(value) === undefined,
        defaultMessage: (args) => `${args?.property ?? 'url'} ${urlProblem(args?.value) ?? 'is invalid'}`,
      },
    },
    options,
  );
}

/**
 * A number or digit string that fits an unsigned BIGINT id, as a canonical string. A body's number is
 * known to be written in digits (the JSON guard refuses `1e3` and `1.0` for the fields read by this and
 * `toTimerIds`), so both forms have the grammar of `TIMER_ID`.
 */
export function toTimerId({ value }: { value: unknown }): unknown {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return value;
}

/**
 * An integer query parameter as written: digits (an optional minus first) become a number; anything else
 * (`1e3`, `0.0`, `0x10`, ` 1`) stays a string for the field's type rule to refuse, naming it. `Number()`
 * would read them all, so a query would take spellings of a number that an id field refuses.
 */
export function toQueryInteger({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
}

/** {@link toTimerId} for each element of a list of ids. */
export const toTimerIds = ({ value }: { value: unknown }): unknown => (Array.isArray(value) ? value.map((v) => toTimerId({ value: v })) : value);

/** The shape of an ISO 8601 instant with `Z` or an offset; no flags, so it is a JSON Schema `pattern` as is. */
export const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
/** {@link ISO_INSTANT} as the document states it: an instant field takes epoch ms >= 0, so years from 1970. */
export const ISO_INSTANT_PATTERN = ISO_INSTANT.source.replace('^(\\d{4})', '^(19[7-9]\\d|[2-9]\\d{3})');
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
}

/** Why the fields of an ISO date-time name no real instant, or undefined. */
function isoFieldProblem(f: number[]): string | undefined {
  const [year, month, day, hour, minute, second, offHours, offMinutes] = f;
  if (month < 1 || month > 12) return `month ${month} does not exist`;
  if (day < 1 || day > daysInMonth(year, month)) return `day ${day} does not exist in ${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`;
  if (hour > 23) return 'hour must be 00-23 (24:00 is not accepted: write 00:00 of the next day)';
  if (minute > 59) return 'minute must be 00-59';
  if (second > 59) return 'second must be 00-59';
  if (offHours > 23 || offMinutes > 59) return 'offset must be within -23:59..+23:59';
  return undefined;
}

/**
 * Epoch ms of an ISO 8601 date-time with `Z` or an offset (`2027-02-28T10:00Z`, seconds and fraction
 * optional), `{ problem }` when it has that shape but names no real instant, undefined when it does
 * not have that shape. Every field is range-checked: `Date.parse` would roll `02-30` over to March
 * and read `T24:00` as the next day.
 */
export function parseIsoInstant(text: string): { ms: number } | { problem: string } | undefined {
  const m = ISO_INSTANT.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '0', frac = '', sign, oh = '0', om = '0'] = m;
  const fields = [y, mo, d, h, mi, s, oh, om].map(Number);
  const problem = isoFieldProblem(fields);
  if (problem) return { problem };
  const [year, month, day, hour, minute, second, offHours, offMinutes] = fields;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const t = new Date(0);
  t.setUTCFullYear(year, month - 1, day);
  t.setUTCHours(hour, minute, second, Number(frac.padEnd(3, '0').slice(0, 3)));
  const offsetMs = (sign === '-' ? -1 : 1) * (offHours * 60 + offMinutes) * 60_000;
  return { ms: t.getTime() - offsetMs };
}

/** Unicode bidirectional formatting characters: a name holding them displays other than it is stored. */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** C0 and C1 control characters and DEL. */
const CONTROL = /[\x00-\x1f\x7f-\x9f]/;

/** Why a user-chosen name (a timer's `name`) is refused, or undefined: blank, or holding control or bidi-control characters. */
export function nameProblem(field: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.trim() === '') return `${field} must not be blank`;
  if (CONTROL.test(value)) return `${field} must not contain control characters`;
  if (BIDI_CONTROL.test(value)) return `${field} must not contain bidirectional control characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)`;
  return undefined;
}

export function IsCleanName(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCleanName',
      validator: { validate: (v: unknown, args) => nameProblem(args?.property ?? 'name', v) === undefined, defaultMessage: (args) => nameProblem(args?.property ?? 'name', args?.value) ?? 'is invalid' },
    },
    options,
  );
}

/** The zone ids the runtime lists, by their lower-case form. */
let listedZones: Map<string, string> | undefined;
const zoneByLowerCase = (): Map<string, string> => (listedZones ??= new Map(Intl.supportedValuesOf('timeZone').map((z) => [z.toLowerCase(), z])));

/**
 * Why a time zone the runtime accepts is refused: it is spelled other than its name (`europe/berlin`).
 * The zone database is case-insensitive, so a wrong spelling would be stored and shown as sent; it is
 * refused naming the canonical spelling instead. Aliases spelled right (`US/Eastern`, `Asia/Kolkata`)
 * are accepted as they are; unknown zones are left to the schedule's own check.
 */
export function timeZoneSpellingProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  const lower = value.toLowerCase();
  const listed = zoneByLowerCase().get(lower);
  if (value === resolved || value === listed) return undefined;
  // Every segment of a tz database name starts with a capital (Etc/GMT+5, US/Eastern, EST5EDT).
  const spelledLikeAName = value.split('/').every((segment) => /^[A-Z]/.test(segment));
  const canonical = lower === resolved.toLowerCase() ? resolved : (listed ?? (spelledLikeAName ? undefined : resolved));
  return canonical ? `timeZone ${JSON.stringify(value)} is not spelled as its IANA name: use ${JSON.stringify(canonical)}` : undefined;
}

export function IsTimeZoneSpelling(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    { name: 'isTimeZoneSpelling', validator: { validate: (v: unknown) => timeZoneSpellingProblem(v) === undefined, defaultMessage: (args) => timeZoneSpellingProblem(args?.value) ?? 'is invalid' } },
    options,
  );
}

/** `true`/`false` in a query string (anything else stays a string and is refused). */
export function toBoolean({ value }: { value: unknown }): unknown {
  return value === 'true' ? true : value === 'false' ? false : value;
}
