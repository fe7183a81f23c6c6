import { ScheduleSpec } from '@timer/schedule';
import { busiestWith, histogramOf, maxFiresPerMinuteBound, minGapBound, peakOf, smallestGap } from './admission';

const T = Date.UTC(2030, 0, 1, 10, 0, 0);
const spec = (s: Omit<ScheduleSpec, 'timeZone'>): ScheduleSpec => ({ timeZone: 'UTC', ...s });

describe('admission arithmetic', () => {
  it('bounds fires per minute and the gap without evaluating the schedule', () => {
    expect(maxFiresPerMinuteBound(spec({ every: 1_000 }))).toBe(60);
    expect(maxFiresPerMinuteBound(spec({ every: 7_000 }))).toBe(9);
    expect(maxFiresPerMinuteBound(spec({ cron: '*/5 * * * * *' }))).toBe(60);
    expect(maxFiresPerMinuteBound(spec({ cron: '*/5 * * * *' }))).toBe(1);
    expect(maxFiresPerMinuteBound(spec({ runAt: T }))).toBe(1);
    expect(minGapBound(spec({ every: 30_000 }))).toBe(30_000);
    expect(minGapBound(spec({ cron: '0 * * * * *' }))).toBe(1_000);
    expect(minGapBound(spec({ cron: '0 * * * *' }))).toBe(60_000);
    expect(minGapBound(spec({ runAt: T }))).toBe(Infinity);
  });

  it('finds a cron\'s smallest gap and where it is, and none for a one-shot', () => {
    // 10:00:00 and 10:00:02 every hour: 2 s apart once an hour.
    expect(smallestGap({ cron: '0,2 0 * * * *', timeZone: 'UTC' }, T + 1)).toEqual({ gapMs: 2_000, at: T + 3_600_000 });
    expect(smallestGap({ cron: '*/15 * * * * *', timeZone: 'UTC' }, T)).toEqual({ gapMs: 15_000, at: T });
    expect(smallestGap(spec({ runAt: T + 5_000 }), T)).toBeNull();
  });

  it('adds a candidate to the load only where it fires, without counting its own stored fires twice', () => {
    const minute = 60_000;
    const existing = new Map([
      [T, 50],
      [T + minute, 10],
      [T + 2 * minute, 80],
    ]);
    // The candidate fires in the first two minutes only: the 80 of the third minute is not its business.
    const added = histogramOf([T + 1_000, T + 2_000, T + minute + 5], minute);
    expect(added).toEqual(new Map([[T, 2], [T + minute, 1]]));
    expect(busiestWith(existing, added)).toEqual({ at: T, existing: 50, added: 2, total: 52 });
    expect(busiestWith(existing, added, new Map([[T, 45]]))).toEqual({ at: T + minute, existing: 10, added: 1, total: 11 });
    expect(busiestWith(existing, new Map())).toBeNull();
    expect(peakOf(existing)).toEqual({ at: T + 2 * minute, fires: 80 });
    expect(peakOf(new Map())).toBeNull();
  });
});
