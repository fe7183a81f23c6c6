import { ATTEMPT_ERROR_MAX, attemptsOf, AttemptColumns } from './task.entity';

describe('attemptsOf', () => {
  const row = (patch: Partial<AttemptColumns> = {}): AttemptColumns => ({ attempt: 1, httpStatus: 204, costMs: 9, error: null, attempts: null, startedAt: 0, ...patch });

  it('rebuilds the one entry of a first success from the columns, as the outcome JSON would hold it', () => {
    expect(attemptsOf(row({ startedAt: 1_000 }))).toEqual([{ attempt: 1, startedAt: 1_000, httpStatus: 204, costMs: 9, error: null }]);
  });

  it('cuts the error to ATTEMPT_ERROR_MAX characters, counting code points as LEFT() does', () => {
    const [a] = attemptsOf(row({ startedAt: 1_000, error: '😀'.repeat(ATTEMPT_ERROR_MAX + 1) }))!;
    expect(Array.from(a.error!)).toHaveLength(ATTEMPT_ERROR_MAX);
  });

  it('keeps a stored history and a fire never called (no start) as they are', () => {
    const kept = [{ attempt: 1, startedAt: 5, httpStatus: 500, costMs: 1, error: 'HTTP 500' }];
    expect(attemptsOf(row({ attempts: kept, startedAt: 1_000 }))).toBe(kept);
    expect(attemptsOf(row())).toBeNull();
  });
});
