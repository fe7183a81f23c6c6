import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { badRequest } from '../common/errors';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Longest accepted key: the column is VARCHAR(255). */
export const IDEMPOTENCY_KEY_MAX = 255;
/** Printable ASCII, spaces inside allowed: what a client can send in any header unchanged. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The `Idempotency-Key` header's value (undefined when absent); a 400 naming the header when unusable. */
export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw badRequest(`${IDEMPOTENCY_KEY_HEADER} header must be given once`);
  if (value.length > IDEMPOTENCY_KEY_MAX) throw badRequest(`${IDEMPOTENCY_KEY_HEADER} header must be at most ${IDEMPOTENCY_KEY_MAX} characters (got ${value.length})`);
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) throw badRequest(`${IDEMPOTENCY_KEY_HEADER} header must be 1-${IDEMPOTENCY_KEY_MAX} printable ASCII characters`);
  return value;
}

/** The request's `Idempotency-Key`, validated (see {@link parseIdempotencyKey}). */
export const IdempotencyKey = createParamDecorator((_: unknown, ctx: ExecutionContext): string | undefined =>
  parseIdempotencyKey(ctx.switchToHttp().getRequest<Request>().headers['idempotency-key']),
);
