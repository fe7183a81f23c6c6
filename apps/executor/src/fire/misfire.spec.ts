import { misfireDecision, SKIP_TOLERANCE_MS } from './misfire';

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
