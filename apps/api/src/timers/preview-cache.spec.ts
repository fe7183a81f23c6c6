import { nextFireTimes } from '@timer/schedule';
import { PreviewCache } from './preview-cache';

describe('PreviewCache', () => {
  const spec = { cron: '0 */10 * * * *', timeZone: 'Europe/Berlin' };
  const t0 = Date.UTC(2030, 2, 31, 0, 55);

  it('answers exactly what nextFireTimes answers, for later and earlier instants', () => {
    const cache = new PreviewCache();
    for (const now of [t0, t0 + 1, t0 + 5 * 60_000, t0 + 17 * 60_000, t0 + 3_600_000, t0 - 3_600_000, t0 + 86_400_000]) {
      expect(cache.next('1', spec, now, 5)).toEqual(nextFireTimes(spec, now, 5));
    }
  });

  it('handles a one-shot that has passed', () => {
    const cache = new PreviewCache();
    const once = { runAt: t0 + 60_000, timeZone: 'UTC' };
    expect(cache.next('2', once, t0, 5)).toEqual([t0 + 60_000]);
    expect(cache.next('2', once, t0 + 60_000, 5)).toEqual([]);
    expect(cache.next('2', once, t0, 0)).toEqual([]);
  });
});
