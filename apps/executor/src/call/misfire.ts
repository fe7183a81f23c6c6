/** How late a fire may be and still count as on time (the `skip` misfire policy, `catchupPolicy: none`). */
export const SKIP_TOLERANCE_MS = 5_000;

export type MisfireDecision = { deliver: true } | { deliver: false; reason: string };

/**
 * The misfire policy (docs/architecture.md): `fire_late` (default, also for an unknown value) delivers a
 * fire that is at most `windowMs` late; `skip` delivers it when at most 5 s late. Anything later is
 * recorded missed with the reason `late by <ms>`, never dropped silently.
 */
export function misfireDecision(policy: string, latenessMs: number, windowMs: number): MisfireDecision {
  const limit = policy === 'skip' ? SKIP_TOLERANCE_MS : windowMs;
  if (latenessMs <= limit) return { deliver: true };
  return { deliver: false, reason: `late by ${Math.round(latenessMs)} ms` };
}

/** The catch-up fields of a timer (docs/behaviour.md, "Fire policies"). */
export interface CatchupRules {
  misfirePolicy: string;
  catchupPolicy: string | null;
  catchupWindowMs: number | null;
}

export type CatchupDecision = { deliver: true } | { deliver: false; reason: 'late' | 'coalesced'; text: string };

/**
 * Whether a first attempt `latenessMs` late is delivered. Without `catchupPolicy` the misfire policy
 * decides as it always did (`fire_late` = `all`, `skip` = `none`). The window (`catchupWindowMs`, else
 * the global TIMER_MISFIRE_WINDOW_MS) bounds every policy: later is missed (`late by <ms>`). Within it,
 * `all` delivers; `none` delivers only what is on time (at most 5 s late); `latest` delivers an on-time
 * fire, and a late one only when the timer's next fire is not due yet (`nextDue` false): the others
 * are missed with the reason `coalesced`.
 */
export function catchupDecision(t: CatchupRules, latenessMs: number, globalWindowMs: number, nextDue: () => boolean): CatchupDecision {
  if (t.catchupPolicy === null) {
    const d = misfireDecision(t.misfirePolicy, latenessMs, t.catchupWindowMs ?? globalWindowMs);
    return d.deliver ? d : { deliver: false, reason: 'late', text: d.reason };
  }
  const window = t.catchupWindowMs ?? globalWindowMs;
  const late = { deliver: false, reason: 'late', text: `late by ${Math.round(latenessMs)} ms` } as const;
  if (latenessMs > window) return late;
  if (latenessMs <= SKIP_TOLERANCE_MS || t.catchupPolicy === 'all') return { deliver: true };
  if (t.catchupPolicy === 'none') return late;
  return nextDue() ? { deliver: false, reason: 'coalesced', text: 'coalesced' } : { deliver: true };
}
