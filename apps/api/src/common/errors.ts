/**
 * Envelope codes. `code` 0 is success; errors use the HTTP status times 100 plus a detail, so a
 * client can switch on either. Documented in apps/api/README.md.
 */
export const ErrorCode = {
  BAD_REQUEST: 40000,
  VALIDATION: 40001,
  MALFORMED_JSON: 40002,
  PAST_RUN_AT: 40003,
  UNDECODABLE_BODY: 40004,
  JSON_TOO_DEEP: 40005,
  UNAUTHORIZED: 40100,
  FORBIDDEN: 40300,
  QUOTA_EXCEEDED: 40301,
  NOT_FOUND: 40400,
  ROUTE_NOT_FOUND: 40401,
  METHOD_NOT_ALLOWED: 40500,
  CONFLICT: 40900,
  STALE_VERSION: 40901,
  PAYLOAD_TOO_LARGE: 41300,
  UNSUPPORTED_MEDIA_TYPE: 41500,
  IDEMPOTENCY_KEY_REUSED: 42200,
  RATE_LIMITED: 42900,
  AUTH_FAILURES_LIMITED: 42901,
  QUOTA_RATE_EXCEEDED: 42902,
  OVER_CAPACITY: 42903,
  INTERNAL: 50000,
  UNAVAILABLE: 50300,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * A failure the client caused or must know about; the filter turns it into the envelope as is, with
 * `data` beside `msg` when given (what the client needs to retry, e.g. the current version).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, code: ErrorCode = ErrorCode.VALIDATION) => new ApiError(400, code, message);
export const notFound = (message: string) => new ApiError(404, ErrorCode.NOT_FOUND, message);
export const conflict = (message: string) => new ApiError(409, ErrorCode.CONFLICT, message);
export const unauthorized = (message: string) => new ApiError(401, ErrorCode.UNAUTHORIZED, message, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (message: string) => new ApiError(403, ErrorCode.FORBIDDEN, message);
/** A dependency (Redis, MySQL) failed and nothing was changed: the client retries after `Retry-After` seconds. */
export const unavailable = (message: string) => new ApiError(503, ErrorCode.UNAVAILABLE, message, { 'Retry-After': '1' });
