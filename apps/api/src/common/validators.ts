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

/** Why a callback URL is unusable (syntax only; the private-address rule needs config), or undefined. */
export function urlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL';
  if (!url.hostname) return 'must name a host';
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
