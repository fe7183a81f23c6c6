import { fireTimesBetween, formatInterval, MAX_CRON_FIRES, nextFireTimes, nthFireTime, parseInterval, ScheduleError, ScheduleSpec, specOf, validateSchedule } from './schedule';

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

  it('reuses a parsed cron across zones and calls without carrying one timer\'s zone or position to another', () => {
    const day = [utc('2026-01-15T00:00:00Z'), utc('2026-01-16T00:00:00Z')] as const;
    const tokyo = () => isos(fireTimesBetween({ cron: '0 0 9 * * *', timeZone: 'Asia/Tokyo' }, ...day));
    expect(tokyo()).toEqual(['2026-01-15T00:00:00.000Z']);
    expect(isos(fireTimesBetween({ cron: '0 0 9 * * *', timeZone: 'Europe/London' }, ...day))).toEqual(['2026-01-15T09:00:00.000Z']);
    expect(isos(nextFireTimes({ cron: '0 0 9 * * *', timeZone: 'Europe/London' }, utc('2026-03-01T00:00:00Z'), 1))).toEqual(['2026-03-01T09:00:00.000Z']);
    expect(tokyo()).toEqual(['2026-01-15T00:00:00.000Z']);
    // An invalid expression is refused every time, not remembered.
    for (let i = 0; i < 2; i++) expect(() => fireTimesBetween({ cron: '0 0 25 * * *', timeZone: 'UTC' }, ...day)).toThrow(ScheduleError);
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


describe('intervals (every)', () => {
  const S = 1_000;
  const T0 = utc('2030-03-31T00:59:58Z'); // Europe/Berlin springs forward at 01:00 UTC

  it.each([
    ['90s', 90 * S],
    ['5m', 300 * S],
    ['1h30m', 5_400 * S],
    ['2d3h4m5s', ((2 * 24 + 3) * 3_600 + 4 * 60 + 5) * S],
    ['1s', S],
    ['366d', 366 * 86_400 * S],
    ['0d1s', S],
  ])('parses %s', (text, ms) => {
    expect(parseInterval(text)).toBe(ms);
  });

  it.each([['0s'], ['0m0s'], [''], ['1m1h'], ['1h1h'], ['1.5s'], ['90'], ['-5s'], ['1w'], [' 5s'], ['5S'], ['367d'], ['366d1s'], [5 as unknown as string], [null as unknown as string]])(
    'refuses %p, naming every',
    (text) => {
      expect(scheduleError(() => parseInterval(text)).field).toBe('every');
    },
  );

  it('formats intervals canonically', () => {
    expect([90 * S, 300 * S, 5_400 * S, 86_400 * S + S, 1_500].map(formatInterval)).toEqual(['1m30s', '5m', '1h30m', '1d1s', '1s500ms']);
    for (const text of ['1m30s', '1h30m', '2d3h4m5s', '366d']) expect(formatInterval(parseInterval(text))).toBe(text);
  });

  it('fires at startAt + k * every on elapsed time, whatever the zone and DST', () => {
    const spec: ScheduleSpec = { every: 3 * S, startAt: T0, timeZone: 'Europe/Berlin' };
    expect(fireTimesBetween(spec, T0 - 10 * S, T0 + 10 * S)).toEqual([0, 3, 6, 9].map((k) => T0 + k * S));
    expect(fireTimesBetween(spec, T0 + 1, T0 + 7 * S)).toEqual([T0 + 3 * S, T0 + 6 * S]);
    expect(fireTimesBetween({ ...spec, timeZone: 'UTC' }, T0, T0 + 10 * S)).toEqual(fireTimesBetween(spec, T0, T0 + 10 * S));
    expect(nextFireTimes(spec, T0, 2)).toEqual([T0 + 3 * S, T0 + 6 * S]);
  });

  it('requires its anchor and exactly one schedule kind', () => {
    expect(scheduleError(() => validateSchedule({ every: S, timeZone: 'UTC' })).field).toBe('startAt');
    expect(scheduleError(() => validateSchedule({ every: S, cron: '* * * * *', startAt: 0, timeZone: 'UTC' })).field).toBe('every');
    expect(scheduleError(() => validateSchedule({ every: S, runAt: 5, startAt: 0, timeZone: 'UTC' })).field).toBe('every');
    expect(scheduleError(() => validateSchedule({ every: 999, startAt: 0, timeZone: 'UTC' })).field).toBe('every');
  });
});

describe('bounds (startAt, endAt, finalAt)', () => {
  const S = 1_000;
  const T0 = utc('2030-01-01T00:00:00Z');
  const cron: ScheduleSpec = { cron: '*/10 * * * * *', timeZone: 'UTC' };

  it('keeps a cron inside [startAt, endAt], both inclusive', () => {
    const bounded = { ...cron, startAt: T0 + 10 * S, endAt: T0 + 40 * S };
    expect(fireTimesBetween(bounded, T0, T0 + 60 * S)).toEqual([10, 20, 30, 40].map((k) => T0 + k * S));
    expect(fireTimesBetween({ ...bounded, startAt: T0 + 10 * S + 1, endAt: T0 + 40 * S - 1 }, T0, T0 + 60 * S)).toEqual([20, 30].map((k) => T0 + k * S));
    expect(nextFireTimes(bounded, T0 + 30 * S, 5)).toEqual([T0 + 40 * S]);
  });

  it('stops at the earlier of endAt and finalAt', () => {
    expect(fireTimesBetween({ ...cron, endAt: T0 + 40 * S, finalAt: T0 + 20 * S }, T0, T0 + 60 * S)).toEqual([0, 10, 20].map((k) => T0 + k * S));
    expect(fireTimesBetween({ every: 7 * S, startAt: T0, finalAt: T0 + 14 * S, timeZone: 'UTC' }, T0, T0 + 60 * S)).toEqual([T0, T0 + 7 * S, T0 + 14 * S]);
  });

  it('refuses bounds on a one-shot and an endAt not after startAt, naming the field', () => {
    expect(scheduleError(() => validateSchedule({ runAt: T0, startAt: T0 - 1, timeZone: 'UTC' })).field).toBe('startAt');
    expect(scheduleError(() => validateSchedule({ runAt: T0, endAt: T0 + 1, timeZone: 'UTC' })).field).toBe('endAt');
    expect(scheduleError(() => validateSchedule({ ...cron, startAt: T0, endAt: T0 })).field).toBe('endAt');
    expect(scheduleError(() => validateSchedule({ ...cron, startAt: -1 })).field).toBe('startAt');
  });

  it('reads a stored timer: its kind, and its bounds except on a one-shot', () => {
    expect(specOf({ cron: null, runAt: null, everyMs: '90000', timeZone: 'UTC', startAt: '5', endAt: null, finalAt: 9 })).toEqual({ every: 90_000, timeZone: 'UTC', startAt: 5, finalAt: 9 });
    expect(specOf({ cron: null, runAt: '7', timeZone: 'UTC', finalAt: 7 })).toEqual({ runAt: 7, timeZone: 'UTC' });
  });
});

describe('nthFireTime', () => {
  const S = 1_000;
  const T0 = utc('2030-01-01T00:00:00Z');

  it('counts fires at or after the anchor, within the bounds', () => {
    expect(nthFireTime({ cron: '*/10 * * * * *', timeZone: 'UTC' }, T0, 3)).toBe(T0 + 20 * S);
    expect(nthFireTime({ cron: '*/10 * * * * *', timeZone: 'UTC' }, T0 + 1, 3)).toBe(T0 + 30 * S);
    expect(nthFireTime({ cron: '*/10 * * * * *', endAt: T0 + 15 * S, timeZone: 'UTC' }, T0, 3)).toBeUndefined();
    expect(nthFireTime({ every: 3 * S, startAt: T0, timeZone: 'UTC' }, T0, 1_000_000)).toBe(T0 + 999_999 * 3 * S);
    expect(nthFireTime({ every: 3 * S, startAt: T0, timeZone: 'UTC' }, T0 + 1, 2)).toBe(T0 + 6 * S);
    expect(nthFireTime({ every: 3 * S, startAt: T0, endAt: T0 + 5 * S, timeZone: 'UTC' }, T0, 3)).toBeUndefined();
  });

  it('counts a DST day in Berlin as the clock lives it (02:30 does not exist: fired once at 03:00)', () => {
    const spec: ScheduleSpec = { cron: '0 30 2 * * *', timeZone: 'Europe/Berlin' };
    expect(new Date(nthFireTime(spec, utc('2030-03-30T00:00:00Z'), 2) as number).toISOString()).toBe('2030-03-31T01:00:00.000Z');
  });

  it('refuses more cron fires than it counts quickly, naming maxFires', () => {
    const started = Date.now();
    expect(nthFireTime({ cron: '0 0 9 * * MON-FRI', timeZone: 'Europe/Berlin' }, T0, MAX_CRON_FIRES)).toBeGreaterThan(T0);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(scheduleError(() => nthFireTime({ cron: '* * * * * *', timeZone: 'UTC' }, T0, MAX_CRON_FIRES + 1)).field).toBe('maxFires');
    expect(scheduleError(() => nthFireTime({ every: S, startAt: T0, timeZone: 'UTC' }, T0, 0)).field).toBe('maxFires');
  });
});
