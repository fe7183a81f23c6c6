import { parseRetryAfter } from './retry-after';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('10', now)).toBe(10_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(['3', '9'], now)).toBe(3_000);
  });

  it('reads an HTTP date (IMF-fixdate, RFC 850, asctime), a past one as 0', () => {
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Monday, 23-Nov-26 10:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon Nov 23 10:00:05 2026', now)).toBe(5_000 + new Date(now).getTimezoneOffset() * 60_000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    for (const v of [undefined, '', '1.5', '-3', 'soon', 'Mon, not a date']) expect(parseRetryAfter(v, now)).toBeUndefined();
  });
});
