import { createHash } from 'crypto';
import { TimerEntity } from '@timer/dal';

/**
 * The delay of a fire under `jitterMs` (docs/behaviour.md, "Fire policies"): in [0, jitterMs), taken from
 * the SHA-256 of the fire id, so every attempt, redelivery and executor computes the same one.
 */
export function jitterOf(fireId: string, jitterMs: number): number {
  if (!Number.isSafeInteger(jitterMs) || jitterMs <= 1) return 0;
  // 48 bits: an exact integer in a double, far finer than any jitter (at most an hour of ms).
  const r = createHash('sha256').update(fireId).digest().readUIntBE(0, 6) / 2 ** 48;
  return Math.floor(r * jitterMs);
}

/**
 * The delay of a scheduled fire of `timer` (its target is run_at plus this): the spread offset the api's
 * admission chose for an autoSpread timer (the same for all its fires, where the load projection
 * counts them), else {@link jitterOf} of the fire id. 0 when the definition is unknown.
 */
export function fireDelayOf(fireId: string, timer: Pick<TimerEntity, 'jitterMs' | 'spreadOffsetMs'> | undefined): number {
  if (!timer) return 0;
  const offset = timer.spreadOffsetMs;
  if (offset !== null && offset !== undefined && Number.isSafeInteger(offset) && offset >= 0 && offset < timer.jitterMs) return offset;
  return jitterOf(fireId, timer.jitterMs ?? 0);
}
