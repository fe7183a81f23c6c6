import { catchupDecision, misfireDecision, SKIP_TOLERANCE_MS } from './misfire';

describe('misfireDecision', () => {
  const HOUR = 3_600_000;

  it('fire_late delivers up to the window and records a later fire missed with the lateness', () => {
    expect(misfireDecision('fire_late', 0, HOUR)).toEqual({ deliver: true });
    expect(misfireDecision('fire_late', HOUR, HOUR)).toEqual({ deliver: true });
    expect(misfireDecision('fire_late', HOUR + 1, HOUR)).toEqual({ deliver: false, reason: 'late by 3600001 ms' });
    expect(misfireDecision('fire_late', 2 * HOUR, HOUR)).toEqual({ deliver: false, reason: 'late by 7200000 ms' });
  });

  it('skip tolerates 5 s whatever the window', () => {
    expect(misfireDecision('skip', SKIP_TOLERANCE_MS, HOUR)).toEqual({ deliver: true });
    expect(misfireDecision('skip', SKIP_TOLERANCE_MS + 1, HOUR)).toEqual({ deliver: false, reason: 'late by 5001 ms' });
  });

  it('treats an unknown policy as fire_late (never drops a fire on a typo)', () => {
    expect(misfireDecision('whatever', 10_000, HOUR)).toEqual({ deliver: true });
  });

  it('delivers early fires (negative lateness)', () => {
    expect(misfireDecision('skip', -200, HOUR)).toEqual({ deliver: true });
  });
});

describe('catchupDecision', () => {
  const HOUR = 3_600_000;
  const rules = (catchupPolicy: string | null, catchupWindowMs: number | null = null, misfirePolicy = 'fire_late') => ({ misfirePolicy, catchupPolicy, catchupWindowMs });
  const never = () => false;
  const due = () => true;

  it('without catchupPolicy keeps the misfire policy (fire_late = all, skip = none), catchupWindowMs replacing the global window', () => {
    expect(catchupDecision(rules(null), HOUR, HOUR, never)).toEqual({ deliver: true });
    expect(catchupDecision(rules(null, 60_000), 60_001, HOUR, never)).toEqual({ deliver: false, reason: 'late', text: 'late by 60001 ms' });
    expect(catchupDecision(rules(null, null, 'skip'), 5_001, HOUR, never)).toEqual({ deliver: false, reason: 'late', text: 'late by 5001 ms' });
  });

  it.each([
    // policy, lateness, next fire due, delivered or the reason
    ['all', 4_000, true, 'deliver'],
    ['all', 50_000, true, 'deliver'],
    ['all', 60_001, false, 'late'],
    ['none', 5_000, true, 'deliver'],
    ['none', 5_001, false, 'late'],
    ['latest', 4_000, true, 'deliver'],
    ['latest', 50_000, true, 'coalesced'],
    ['latest', 50_000, false, 'deliver'],
    ['latest', 60_001, false, 'late'],
  ] as const)('%s, %i ms late, next due %s: %s (window 60 s)', (policy, lateness, nextDue, expected) => {
    const d = catchupDecision(rules(policy, 60_000), lateness, HOUR, nextDue ? due : never);
    expect(d.deliver ? 'deliver' : d.reason).toBe(expected);
  });
});
