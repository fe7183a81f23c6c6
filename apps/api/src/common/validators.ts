import { applyDecorators } from '@nestjs/common';
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

/** A number or digit string that fits an unsigned BIGINT id, as a canonical string. */
export function toTimerId({ value }: { value: unknown }): unknown {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return value;
}

/** The shape of an ISO 8601 instant with `Z` or an offset; no flags, so it is a JSON Schema `pattern` as is. */
export const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
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
