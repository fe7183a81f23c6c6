import { fireTimesBetween, nextFireTimes, ScheduleError, ScheduleSpec, validateSchedule } from './schedule';

const utc = (iso: string) => Date.parse(iso);
const isos = (ts: number[]) => ts.map((t) => new Date(t).toISOString());
const H = 3_600_000;

function scheduleError(fn: () => unknown): ScheduleError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ScheduleError);
    return e as ScheduleError;
  }
  throw new Error('expected a ScheduleError');
}

describe('validateSchedule', () => {
  it.each([
    ['5 fields', '*/15 * * * *'],
    ['6 fields, seconds first', '*/5 * * * * *'],
    ['ranges, steps, lists and names', '0 */5,7 1-3/2 * JAN-MAR MON-FRI'],
    ['THU is a day name, not the random H', '0 0 9 * * THU'],
    ['last day of month', '0 0 L * *'],
    ['extra blanks', '  0  12 * * *  '],
  ])('accepts %s', (_what, cron) => {
    expect(() => validateSchedule({ cron, timeZone: 'UTC' })).not.toThrow();
  });

  it.each([
    ['an empty expression', ''],
    ['too few fields', '* * *'],
    ['a year field (7 fields)', '0 0 0 1 1 * 2030'],
    ['a year in the day-of-week position', '0 0 1 1 * 2030'],
    ['a minute out of range', '61 * * * *'],
    ['an hour out of range', '* 24 * * *'],
    ['a month out of range', '* * * 13 *'],
    ['a step of zero', '*/0 * * * *'],
    ['a reversed range', '5-1 * * * *'],
    ['an empty list item', '1,,2 * * * *'],
    ['letters', 'a b c d e'],
    ['a day that never exists', '0 0 30 2 *'],
    ['the random H', 'H * * * *'],
    ['a macro', '@daily'],
  ])('rejects %s, naming the cron field', (_what, cron) => {
    const e = scheduleError(() => validateSchedule({ cron, timeZone: 'UTC' }));
    expect(e.field).toBe('cron');
    expect(e.message).toMatch(/cron/);
  });

  it('rejects an over-long expression', () => {
    expect(scheduleError(() => validateSchedule({ cron: `${'1,'.repeat(200)}1 * * * *`, timeZone: 'UTC' })).field).toBe('cron');
  });

  it('requires exactly one of cron and runAt', () => {
    expect(scheduleError(() => validateSchedule({ timeZone: 'UTC' })).field).toBe('cron');
    const both = scheduleError(() => validateSchedule({ cron: '* * * * *', runAt: 1_000, timeZone: 'UTC' }));
    expect(both.field).toBe('runAt');
    expect(both.message).toMatch(/not both/);
  });

  it.each([[1.5], [-1], [Number.MAX_SAFE_INTEGER + 2], [Number.NaN], ['1000' as unknown as number]])('rejects runAt %p', (runAt) => {
    expect(scheduleError(() => validateSchedule({ runAt, timeZone: 'UTC' })).field).toBe('runAt');
  });

  it('rejects an unknown time zone, naming the timeZone field', () => {
    for (const timeZone of ['Mars/Olympus_Mons', 'Europe/Berlinn', '']) {
      const e = scheduleError(() => validateSchedule({ cron: '* * * * *', timeZone }));
      expect(e.field).toBe('timeZone');
      expect(e.message).toContain(JSON.stringify(timeZone));
    }
    // The zone is checked for one-shot timers too.
    expect(scheduleError(() => validateSchedule({ runAt: 1, timeZone: 'Nowhere/Town' })).field).toBe('timeZone');
  });

  it('treats a missing zone as UTC', () => {
    expect(() => validateSchedule({ cron: '* * * * *' } as ScheduleSpec)).not.toThrow();
  });
});

describe('fireTimesBetween', () => {
  const from = utc('2026-01-15T10:00:00Z');

  it('reads 6 fields as seconds first (every 5 s), not as minutes plus a year', () => {
    expect(isos(fireTimesBetween({ cron: '*/5 * * * * *', timeZone: 'UTC' }, from, from + 20_000))).toEqual([
      '2026-01-15T10:00:00.000Z',
      '2026-01-15T10:00:05.000Z',
      '2026-01-15T10:00:10.000Z',
      '2026-01-15T10:00:15.000Z',
    ]);
  });

  it('reads 5 fields with minute precision (second 0)', () => {
    expect(isos(fireTimesBetween({ cron: '*/20 * * * *', timeZone: 'UTC' }, from, from + H))).toEqual([
      '2026-01-15T10:00:00.000Z',
      '2026-01-15T10:20:00.000Z',
      '2026-01-15T10:40:00.000Z',
    ]);
  });

  it('supports ranges, steps and lists', () => {
    // Minutes 5 and 7..12 every 2 (7, 9, 11), hours 10-11.
    expect(isos(fireTimesBetween({ cron: '5,7-12/2 10-11 * * *', timeZone: 'UTC' }, from, from + 3 * H))).toEqual([
      '2026-01-15T10:05:00.000Z',
      '2026-01-15T10:07:00.000Z',
      '2026-01-15T10:09:00.000Z',
      '2026-01-15T10:11:00.000Z',
      '2026-01-15T11:05:00.000Z',
      '2026-01-15T11:07:00.000Z',
      '2026-01-15T11:09:00.000Z',
      '2026-01-15T11:11:00.000Z',
    ]);
    // Weekdays by name: 2026-01-15 is a Thursday.
    expect(isos(fireTimesBetween({ cron: '0 9 * * MON,THU', timeZone: 'UTC' }, from, from + 7 * 24 * H))).toEqual([
      '2026-01-19T09:00:00.000Z',
      '2026-01-22T09:00:00.000Z',
    ]);
  });

  it('is half-open: includes from, excludes to', () => {
    const spec = { cron: '0 * * * *', timeZone: 'UTC' };
    expect(isos(fireTimesBetween(spec, from, from + 2 * H))).toEqual(['2026-01-15T10:00:00.000Z', '2026-01-15T11:00:00.000Z']);
    expect(fireTimesBetween(spec, from + 1, from + 2 * H + 1)).toEqual([from + H, from + 2 * H]);
    expect(fireTimesBetween(spec, from, from)).toEqual([]);
    expect(fireTimesBetween(spec, from + H, from)).toEqual([]);
  });

  it('gives a one-shot timer its runAt when in range', () => {
    const spec = { runAt: from + 1_234, timeZone: 'Europe/Berlin' };
    expect(fireTimesBetween(spec, from, from + 2_000)).toEqual([from + 1_234]);
    expect(fireTimesBetween(spec, from + 1_234, from + 1_235)).toEqual([from + 1_234]);
    expect(fireTimesBetween(spec, from, from + 1_234)).toEqual([]);
    expect(fireTimesBetween(spec, from + 1_235, from + H)).toEqual([]);
  });

  it('throws RangeError beyond the limit instead of building a huge array', () => {
    const spec = { cron: '* * * * * *', timeZone: 'UTC' };
    expect(fireTimesBetween(spec, from, from + 10_000, 10)).toHaveLength(10);
    expect(() => fireTimesBetween(spec, from, from + 11_000, 10)).toThrow(RangeError);
    // The default limit is 100 000: a day of seconds (86 400) fits, two days do not.
    expect(fireTimesBetween(spec, from, from + 24 * H)).toHaveLength(86_400);
    expect(() => fireTimesBetween(spec, from, from + 48 * H)).toThrow(RangeError);
  });

  it('throws ScheduleError for an invalid schedule', () => {
    expect(() => fireTimesBetween({ cron: 'nope', timeZone: 'UTC' }, from, from + H)).toThrow(ScheduleError);
  });

  it('evaluates in the timer zone, including half-hour offsets (Asia/Kolkata, UTC+05:30)', () => {
    expect(isos(fireTimesBetween({ cron: '0 0 9 * * *', timeZone: 'Asia/Kolkata' }, utc('2026-01-15T00:00:00Z'), utc('2026-01-17T00:00:00Z')))).toEqual([
      '2026-01-15T03:30:00.000Z',
      '2026-01-16T03:30:00.000Z',
    ]);
    // Every 15 minutes on the local clock is every 15 minutes in UTC too, shifted by :30.
    expect(isos(fireTimesBetween({ cron: '0 0 * * *', timeZone: 'Asia/Kolkata' }, utc('2026-01-15T00:00:00Z'), utc('2026-01-16T00:00:00Z')))).toEqual([
      '2026-01-15T18:30:00.000Z',
    ]);
  });

  describe('daylight saving time', () => {
    // Europe/Berlin: 2026-03-29 01:00Z 02:00 CET -> 03:00 CEST; 2026-10-25 01:00Z 03:00 CEST -> 02:00 CET.
    // America/New_York: 2026-03-08 07:00Z 02:00 EST -> 03:00 EDT; 2026-11-01 06:00Z 02:00 EDT -> 01:00 EST.
    const berlin = 'Europe/Berlin';
    const ny = 'America/New_York';

    it('spring forward, fixed hour: "0 30 2 * * *" fires once at 03:00 CEST on the gap day (Berlin)', () => {
      expect(isos(fireTimesBetween({ cron: '0 30 2 * * *', timeZone: berlin }, utc('2026-03-27T00:00:00Z'), utc('2026-03-31T00:00:00Z')))).toEqual([
        '2026-03-27T01:30:00.000Z', // 02:30 CET
        '2026-03-28T01:30:00.000Z', // 02:30 CET
        '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, the first instant after the gap
        '2026-03-30T00:30:00.000Z', // 02:30 CEST
      ]);
    });

    it('spring forward, fixed hour with several fires in the gap: one fire at the end of the gap, no duplicate with 03:00', () => {
      expect(isos(fireTimesBetween({ cron: '*/20 2-3 * * *', timeZone: berlin }, utc('2026-03-29T00:00:00Z'), utc('2026-03-29T03:00:00Z')))).toEqual([
        '2026-03-29T01:00:00.000Z', // 02:00, 02:20, 02:40 (gap) and 03:00 CEST: once
        '2026-03-29T01:20:00.000Z',
        '2026-03-29T01:40:00.000Z',
      ]);
    });

    it('spring forward, every hour: runs on elapsed time, the missing wall times are not fired (New York)', () => {
      expect(isos(fireTimesBetween({ cron: '7 * * * *', timeZone: ny }, utc('2026-03-08T05:00:00Z'), utc('2026-03-08T09:00:00Z')))).toEqual([
        '2026-03-08T05:07:00.000Z', // 00:07 EST
        '2026-03-08T06:07:00.000Z', // 01:07 EST
        '2026-03-08T07:07:00.000Z', // 03:07 EDT (02:07 does not exist; one real hour later)
        '2026-03-08T08:07:00.000Z',
      ]);
    });

    it('spring forward in New York, fixed hour: 02:30 fires at 03:00 EDT', () => {
      expect(isos(fireTimesBetween({ cron: '30 2 * * *', timeZone: ny }, utc('2026-03-07T00:00:00Z'), utc('2026-03-10T00:00:00Z')))).toEqual([
        '2026-03-07T07:30:00.000Z',
        '2026-03-08T07:00:00.000Z',
        '2026-03-09T06:30:00.000Z',
      ]);
    });

    it('fall back, fixed hour: 01:30 fires once, at the first occurrence (New York)', () => {
      expect(isos(fireTimesBetween({ cron: '30 1 * * *', timeZone: ny }, utc('2026-10-31T00:00:00Z'), utc('2026-11-03T00:00:00Z')))).toEqual([
        '2026-10-31T05:30:00.000Z', // 01:30 EDT
        '2026-11-01T05:30:00.000Z', // 01:30 EDT, first occurrence; not again at 06:30Z (01:30 EST)
        '2026-11-02T06:30:00.000Z', // 01:30 EST
      ]);
      // A window that starts inside the repeated hour does not fire the second occurrence either.
      expect(fireTimesBetween({ cron: '30 1 * * *', timeZone: ny }, utc('2026-11-01T06:15:00Z'), utc('2026-11-01T08:00:00Z'))).toEqual([]);
    });

    it('fall back, fixed hour with sub-hour steps: once per wall time (Berlin 02:xx)', () => {
      expect(isos(fireTimesBetween({ cron: '0 */30 2 * * *', timeZone: berlin }, utc('2026-10-24T23:00:00Z'), utc('2026-10-25T03:00:00Z')))).toEqual([
        '2026-10-25T00:00:00.000Z', // 02:00 CEST
        '2026-10-25T00:30:00.000Z', // 02:30 CEST; 02:00 / 02:30 CET are not fired again
      ]);
    });

    it('fall back, every hour / every n minutes: both occurrences fire, on elapsed time', () => {
      expect(isos(fireTimesBetween({ cron: '*/30 * * * *', timeZone: ny }, utc('2026-11-01T04:30:00Z'), utc('2026-11-01T07:30:00Z')))).toEqual([
        '2026-11-01T04:30:00.000Z', // 00:30 EDT
        '2026-11-01T05:00:00.000Z', // 01:00 EDT
        '2026-11-01T05:30:00.000Z', // 01:30 EDT
        '2026-11-01T06:00:00.000Z', // 01:00 EST
        '2026-11-01T06:30:00.000Z', // 01:30 EST
        '2026-11-01T07:00:00.000Z', // 02:00 EST
      ]);
      expect(isos(fireTimesBetween({ cron: '0 0 * * * *', timeZone: berlin }, utc('2026-10-24T23:00:00Z'), utc('2026-10-25T03:00:00Z')))).toEqual([
        '2026-10-24T23:00:00.000Z', // 01:00 CEST
        '2026-10-25T00:00:00.000Z', // 02:00 CEST
        '2026-10-25T01:00:00.000Z', // 02:00 CET
        '2026-10-25T02:00:00.000Z', // 03:00 CET
      ]);
    });

    it('every second across both transitions: one fire per real second, none twice, none lost', () => {
      for (const [zone, at] of [
        [berlin, utc('2026-03-29T01:00:00Z')],
        [berlin, utc('2026-10-25T01:00:00Z')],
        [ny, utc('2026-03-08T07:00:00Z')],
        [ny, utc('2026-11-01T06:00:00Z')],
      ] as const) {
        const fires = fireTimesBetween({ cron: '* * * * * *', timeZone: zone }, at - 2 * H, at + 2 * H);
        expect(fires).toHaveLength(4 * 3600);
        fires.forEach((t, i) => expect(t).toBe(at - 2 * H + i * 1000));
      }
    });

    it('gives the same fires however the range is cut into windows', () => {
      const spec = { cron: '0 */10 0-4 * * *', timeZone: berlin };
      const whole = fireTimesBetween(spec, utc('2026-10-24T20:00:00Z'), utc('2026-10-25T06:00:00Z'));
      const pieces: number[] = [];
      for (let t = utc('2026-10-24T20:00:00Z'); t < utc('2026-10-25T06:00:00Z'); t += 17 * 60_000) {
        pieces.push(...fireTimesBetween(spec, t, Math.min(t + 17 * 60_000, utc('2026-10-25T06:00:00Z'))));
      }
      expect(pieces).toEqual(whole);
      expect(new Set(whole).size).toBe(whole.length);
      // 5 local hours x 6, minus the repeated 02:xx CET hour.
      expect(whole).toHaveLength(30);
    });
  });
});

describe('nextFireTimes', () => {
  it('returns the next fires strictly after the given instant', () => {
    const at = utc('2026-01-15T10:00:00Z');
    expect(isos(nextFireTimes({ cron: '0 * * * *', timeZone: 'UTC' }, at, 3))).toEqual([
      '2026-01-15T11:00:00.000Z',
      '2026-01-15T12:00:00.000Z',
      '2026-01-15T13:00:00.000Z',
    ]);
    expect(nextFireTimes({ cron: '0 * * * *', timeZone: 'UTC' }, at - 1, 1)).toEqual([at]);
    expect(nextFireTimes({ cron: '0 * * * *', timeZone: 'UTC' }, at, 0)).toEqual([]);
  });

  it('finds rare fires years ahead (Feb 29 in Berlin)', () => {
    expect(isos(nextFireTimes({ cron: '0 0 29 2 *', timeZone: 'Europe/Berlin' }, utc('2026-01-01T00:00:00Z'), 2))).toEqual([
      '2028-02-28T23:00:00.000Z',
      '2032-02-28T23:00:00.000Z',
    ]);
  });

  it('gives at most one fire for a one-shot timer, none once it is past', () => {
    expect(nextFireTimes({ runAt: 5_000, timeZone: 'UTC' }, 4_999, 10)).toEqual([5_000]);
    expect(nextFireTimes({ runAt: 5_000, timeZone: 'UTC' }, 5_000, 10)).toEqual([]);
  });

  it('rejects an absurd count', () => {
    expect(() => nextFireTimes({ cron: '* * * * *', timeZone: 'UTC' }, 0, -1)).toThrow(RangeError);
    expect(() => nextFireTimes({ cron: '* * * * *', timeZone: 'UTC' }, 0, 1e9)).toThrow(RangeError);
  });
});

