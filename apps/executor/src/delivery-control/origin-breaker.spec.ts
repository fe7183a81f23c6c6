import { CircuitState, HALF_OPEN_RETRY_MS, OriginBreaker, verdictOf } from './origin-breaker';

describe('OriginBreaker', () => {
  const T = 1_000_000;
  const breaker = () => new OriginBreaker({ failures: 3, openMs: 10_000, retryAfterMaxMs: 60_000 });
  const fail = (b: OriginBreaker, now: number, probe = false) => b.record(now, 'failure', probe);

  it('opens after N consecutive failures, and a healthy answer in between starts the count again', () => {
    const b = breaker();
    fail(b, T);
    fail(b, T);
    b.record(T, 'healthy', false);
    fail(b, T);
    fail(b, T);
    expect(b.state).toBe(CircuitState.Closed);
    expect(b.check(T)).toEqual({ pass: true, probe: false });
    fail(b, T + 5);
    expect(b.state).toBe(CircuitState.Open);
    expect(b.check(T + 6)).toEqual({ pass: false, reason: 'circuit_open', until: T + 5 + 10_000 });
    expect(b.notBefore(T + 6)).toBe(T + 10_005);
  });

  it('after the open time lets exactly one probe through; success closes, failure opens again for the whole time', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) fail(b, T);
    const later = T + 10_000;
    expect(b.check(later)).toEqual({ pass: true, probe: true });
    expect(b.state).toBe(CircuitState.HalfOpen);
    expect(b.check(later + 1)).toEqual({ pass: false, reason: 'circuit_open', until: later + 1 + HALF_OPEN_RETRY_MS });
    fail(b, later + 100, true);
    expect(b.state).toBe(CircuitState.Open);
    expect(b.check(later + 9_000)).toMatchObject({ pass: false, until: later + 100 + 10_000 });
    expect(b.check(later + 10_100)).toEqual({ pass: true, probe: true });
    b.record(later + 10_200, 'healthy', true);
    expect(b.state).toBe(CircuitState.Closed);
    expect(b.check(later + 10_201)).toEqual({ pass: true, probe: false });
    expect(b.idle(later + 10_201)).toBe(true);
  });

  it('does not close on a late success of a call sent before it opened; a cancelled probe frees the next one', () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) fail(b, T);
    b.record(T + 1, 'healthy', false);
    expect(b.state).toBe(CircuitState.Open);
    expect(b.check(T + 10_000)).toEqual({ pass: true, probe: true });
    b.cancelProbe();
    expect(b.check(T + 10_001)).toEqual({ pass: true, probe: true });
  });

  it('honours Retry-After, capped, whatever the circuit', () => {
    const b = breaker();
    b.record(T, 'healthy', false, 10_000);
    expect(b.state).toBe(CircuitState.Closed);
    expect(b.check(T + 9_999)).toEqual({ pass: false, reason: 'retry_after', until: T + 10_000 });
    expect(b.check(T + 10_000)).toEqual({ pass: true, probe: false });
    b.record(T, 'failure', false, 3_600_000);
    expect(b.notBefore(T)).toBe(T + 60_000);
    expect(b.idle(T + 1)).toBe(false);
  });

  it('counts no answer and 5xx against the origin, not a 4xx, a 429 or a refused address', () => {
    expect(verdictOf({ retryable: true })).toBe('failure');
    expect(verdictOf({ status: 503, retryable: true })).toBe('failure');
    expect(verdictOf({ status: 404, retryable: false })).toBe('healthy');
    expect(verdictOf({ status: 429, retryable: true })).toBe('healthy');
    expect(verdictOf({ status: 200, retryable: false })).toBe('healthy');
    expect(verdictOf({ retryable: false })).toBe('healthy');
  });
});
