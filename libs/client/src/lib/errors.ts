/** Error codes of the envelope (apps/api/README.md): HTTP status x 100 + a detail. */
export const ErrorCodes = {
  VALIDATION: 40001,
  MALFORMED_JSON: 40002,
  PAST_RUN_AT: 40003,
  UNAUTHORIZED: 40100,
  FORBIDDEN: 40300,
  NOT_FOUND: 40400,
  ROUTE_NOT_FOUND: 40401,
  CONFLICT: 40900,
  STALE_VERSION: 40901,
  IDEMPOTENCY_KEY_REUSED: 42200,
  RATE_LIMITED: 42900,
  AUTH_FAILURES_LIMITED: 42901,
  INTERNAL: 50000,
  UNAVAILABLE: 50300,
} as const;

/** The api refused or failed a request: the status, the envelope's `code` and `msg`, and the field it names. */
export class TimerApiError extends Error {
  /** The request field a 400 names (`notifyHTTPParam.url`, `runAt`, `Idempotency-Key`), when its message starts with one. */
  readonly field?: string;

  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly extra: {
      requestId?: string;
      /** `data` of the envelope, e.g. `{version}` (the current one) on a stale edit (40901). */
      data?: Record<string, unknown>;
      /** From `Retry-After` on 429/503. */
      retryAfterMs?: number;
    } = {},
  ) {
    super(message);
    this.name = 'TimerApiError';
    this.field = status === 400 ? fieldOf(message) : undefined;
  }

  get requestId(): string | undefined {
    return this.extra.requestId;
  }

  /** The current version a stale PUT/PATCH was refused with (409, code 40901). */
  get currentVersion(): number | undefined {
    const v = this.extra.data?.version;
    return this.code === ErrorCodes.STALE_VERSION && typeof v === 'number' ? v : undefined;
  }
}

/** The api could not be reached, or its answer could not be read (no status). */
export class TimerNetworkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TimerNetworkError';
  }
}

/**
 * The field a validation message starts with: `notifyHTTPParam.url must be ...`, `runAt "..." is not
 * ...`, `maxFires: ...`, `property foo should not exist` (an unknown field), `Idempotency-Key header ...`.
 * Several messages are joined with "; ": the first one's.
 */
export function fieldOf(message: string): string | undefined {
  const m = /^(?:property )?([A-Za-z][\w-]*(?:\.[\w-]+)*)(?=[\s:]|$)/.exec(message);
  if (!m) return undefined;
  // Plain words that start messages without naming a field.
  return ['request', 'malformed', 'unsupported', 'timer', 'app', 'fire', 'Unexpected'].includes(m[1]) ? undefined : m[1];
}

interface Envelope {
  code?: unknown;
  msg?: unknown;
  requestId?: unknown;
  data?: unknown;
}

/** The error an answer with a status >= 400 stands for, from its envelope when it has one. */
export function errorFromAnswer(status: number, statusText: string, text: string, retryAfterMs?: number): TimerApiError {
  let env: Envelope | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') env = parsed as Envelope;
  } catch {
    env = undefined;
  }
  const code = typeof env?.code === 'number' && env.code !== 0 ? env.code : status * 100;
  const message = typeof env?.msg === 'string' && env.msg ? env.msg : `HTTP ${status}${statusText ? ` ${statusText}` : ''}${text ? `: ${text.slice(0, 200)}` : ''}`;
  const data = env?.data && typeof env.data === 'object' && !Array.isArray(env.data) ? (env.data as Record<string, unknown>) : undefined;
  return new TimerApiError(status, code, message, { requestId: typeof env?.requestId === 'string' ? env.requestId : undefined, data, retryAfterMs });
}
