/** How late a fire may be under the `skip` policy before it is recorded missed. */
export const SKIP_TOLERANCE_MS = 5_000;

export type MisfireDecision = { deliver: true } | { deliver: false; reason: string };

/**
 * The misfire policy (docs/pipeline.md): `fire_late` (default, also for an unknown value) delivers a
 * fire that is at most `windowMs` late; `skip` delivers it when at most 5 s late. Anything later is
 * recorded missed with the reason `late by <ms>`, never dropped silently.
 */
export function misfireDecision(policy: string, latenessMs: number, windowMs: number): MisfireDecision {
  const limit = policy === 'skip' ? SKIP_TOLERANCE_MS : windowMs;
  if (latenessMs <= limit) return { deliver: true };
  return { deliver: false, reason: `late by ${Math.round(latenessMs)} ms` };
}
