import { previousFireTime } from './previous-fire';
import { nextFireTimes, ScheduleSpec } from './schedule';

const utc = (iso: string) => Date.parse(iso);

describe('previousFireTime', () => {
  it('an interval: the step before, none before its anchor', () => {
    const spec: ScheduleSpec = { every: 5_000, startAt: utc('2026-01-01T00:00:00Z'), timeZone: 'UTC' };
    expect(previousFireTime(spec, utc('2026-01-01T00:00:10Z'))).toBe(utc('2026-01-01T00:00:05Z'));
    expect(previousFireTime(spec, utc('2026-01-01T00:00:07Z'))).toBe(utc('2026-01-01T00:00:05Z'));
    expect(previousFireTime(spec, utc('2026-01-01T00:00:05Z'))).toBe(utc('2026-01-01T00:00:00Z'));
    expect(previousFireTime(spec, utc('2026-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('a one-shot has none', () => {
    expect(previousFireTime({ runAt: utc('2026-01-01T00:00:00Z'), timeZone: 'UTC' }, utc('2026-01-02T00:00:00Z'))).toBeUndefined();
  });

  it.each([
    ['every second', '* * * * * *', 'UTC', '2026-03-01T10:00:00Z', '2026-03-01T09:59:59Z'],
    ['hourly', '0 * * * *', 'UTC', '2026-03-01T10:00:00Z', '2026-03-01T09:00:00Z'],
    ['yearly', '0 0 1 1 *', 'UTC', '2026-01-01T00:00:00Z', '2025-01-01T00:00:00Z'],
    ['leap day in a zone', '0 0 29 2 *', 'Europe/Berlin', '2028-02-28T23:00:00Z', '2024-02-28T23:00:00Z'],
  ])('a cron (%s): the fire before', (_, cron, timeZone, before, expected) => {
    expect(previousFireTime({ cron, timeZone }, utc(before))).toBe(utc(expected));
  });

  it('a cron: agrees with the next fire after the answer', () => {
    const spec: ScheduleSpec = { cron: '*/7 9-17 * * 1-5', timeZone: 'America/New_York' };
    const before = utc('2026-03-09T13:00:00Z');
    const prev = previousFireTime(spec, before) as number;
    expect(prev).toBeLessThan(before);
    expect(nextFireTimes(spec, prev, 1)[0]).toBeGreaterThanOrEqual(before);
  });

  it('a dense cron after a long quiet spell (more fires in a span than one evaluation returns)', () => {
    // Every second on Mondays only; asked on a Wednesday: the 18 h span is empty, the 12-day one too full.
    const spec: ScheduleSpec = { cron: '* * * * * 1', timeZone: 'UTC' };
    expect(previousFireTime(spec, utc('2026-03-04T12:00:00Z'))).toBe(utc('2026-03-02T23:59:59Z'));
  });

  it('none before the first fire within the bounds', () => {
    const spec: ScheduleSpec = { cron: '0 * * * *', timeZone: 'UTC', startAt: utc('2026-03-01T10:00:00Z') };
    expect(previousFireTime(spec, utc('2026-03-01T10:00:00Z'))).toBeUndefined();
    expect(previousFireTime(spec, utc('2026-03-01T11:30:00Z'))).toBe(utc('2026-03-01T11:00:00Z'));
  });
});
