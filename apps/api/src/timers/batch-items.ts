import { BadRequestException } from '@nestjs/common';
import { ApiError, badRequest, ErrorCode } from '../common/errors';
import { validatedProperties } from '../common/dto-metadata';
import { CreateTimerDto } from './dto/create-timer.dto';

/** The fields of a create, for telling a message that names one (`cron: ...`) from one that names none (`quota ...`). */
let createFields: ReadonlySet<string> | undefined;

/**
 * A refusal of the batch's item `i` (POST def/batch), its message naming the item: `timers[3].cron: ...`
 * when the single create's message starts with a field of the create, `timers[3]: ...` otherwise
 * (a quota or admission refusal).
 */
export function itemMessage(i: number, message: string): string {
  createFields ??= new Set(validatedProperties(CreateTimerDto).keys());
  const field = /^[A-Za-z][A-Za-z0-9]*/.exec(message)?.[0];
  return field !== undefined && createFields.has(field) ? `timers[${i}].${message}` : `timers[${i}]: ${message}`;
}

/** Runs the checks of item `i`, an ApiError or a validation error naming it (same status and code). */
export function atItem<T>(i: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw itemError(i, e);
  }
}

/** {@link atItem} of asynchronous checks. */
export async function atItemAsync<T>(i: number, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw itemError(i, e);
  }
}

function itemError(i: number, e: unknown): unknown {
  if (e instanceof ApiError) return new ApiError(e.status, e.code, itemMessage(i, e.message), e.headers, e.data);
  if (e instanceof BadRequestException) {
    // The validation pipe's answer: one message per failed constraint, each naming its property path.
    const body = e.getResponse() as { message?: unknown };
    const messages = Array.isArray(body.message) ? body.message.map(String) : [e.message];
    return new ApiError(400, ErrorCode.VALIDATION, messages.map((m) => itemMessage(i, m)).join('; '));
  }
  return e;
}

/** 400 when two items of a batch have the same name: the names of one app's live timers are unique. */
export function checkDistinctNames(names: readonly string[]): void {
  const first = new Map<string, number>();
  names.forEach((name, i) => {
    const j = first.get(name);
    if (j !== undefined) throw badRequest(`timers[${i}].name: duplicate of timers[${j}] (${JSON.stringify(name)})`);
    first.set(name, i);
  });
}
