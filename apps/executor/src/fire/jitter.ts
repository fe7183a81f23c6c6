import { createHash } from 'crypto';

/**
 * The delay of a fire under `jitterMs` (docs/pipeline.md, "Fire policies"): in [0, jitterMs), taken from
 * the SHA-256 of the fire id, so every attempt, redelivery and executor computes the same one.
 */
export function jitterOf(fireId: string, jitterMs: number): number {
  if (!Number.isSafeInteger(jitterMs) || jitterMs <= 1) return 0;
  // 48 bits: an exact integer in a double, far finer than any jitter (at most an hour of ms).
  const r = createHash('sha256').update(fireId).digest().readUIntBE(0, 6) / 2 ** 48;
  return Math.floor(r * jitterMs);
}
