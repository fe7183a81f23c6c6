import { CronExpressionParser } from 'cron-parser';
import { fireTimesBetween, previewFireTimes, ScheduleError, ScheduleSpec, specOf, validateSchedule } from './schedule';

const utc = (iso: string) => Date.parse(iso);
const isos = (ts: number[]) => ts.map((t) => new Date(t).toISOString());
const H = 3_600_000;
const day = (spec: ScheduleSpec, iso: string) => isos(fireTimesBetween(spec, utc(`${iso}T00:00:00Z`) - 24 * H, utc(`${iso}T00:00:00Z`) + 38 * H));
const flags = (spec: ScheduleSpec, afterIso: string, count: number) =>
  previewFireTimes(spec, utc(afterIso), count).map((f) => `${new Date(f.at).toISOString()}${f.dst ? ` ${f.dst}` : ''}`);

describe('dstGap and dstOverlap', () => {
  describe('Europe/Berlin (gap 2026-03-29 02:00 -> 03:00, overlap 2026-10-25 03:00 -> 02:00)', () => {
    const zone = 'Europe/Berlin';
    it('gap: shift fires 02:30 once at 03:00 CEST, skip does not fire it', () => {
      expect(day({ cron: '30 2 * * *', timeZone: zone }, '2026-03-29')).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
      expect(day({ cron: '30 2 * * *', timeZone: zone, dstGap: 'skip' }, '2026-03-29')).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
    });
    it('overlap: first fires 02:30 at 02:30 CEST only, both at 02:30 CEST and 02:30 CET', () => {
      expect(day({ cron: '30 2 * * *', timeZone: zone }, '2026-10-25')).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
      expect(day({ cron: '30 2 * * *', timeZone: zone, dstOverlap: 'both' }, '2026-10-25')).toEqual([
        '2026-10-24T00:30:00.000Z',
        '2026-10-25T00:30:00.000Z',
        '2026-10-25T01:30:00.000Z',
        '2026-10-26T01:30:00.000Z',
      ]);
    });
    it('flags the fires in a preview: shifted, repeated, skipped (not counted)', () => {
      expect(flags({ cron: '30 2 * * *', timeZone: zone }, '2026-03-28T12:00:00Z', 2)).toEqual(['2026-03-29T01:00:00.000Z shifted', '2026-03-30T00:30:00.000Z']);
      expect(flags({ cron: '30 2 * * *', timeZone: zone, dstGap: 'skip' }, '2026-03-28T12:00:00Z', 2)).toEqual([
        '2026-03-29T01:00:00.000Z skipped',
        '2026-03-30T00:30:00.000Z',
        '2026-03-31T00:30:00.000Z',
      ]);
      expect(flags({ cron: '30 2 * * *', timeZone: zone, dstOverlap: 'both' }, '2026-10-24T12:00:00Z', 3)).toEqual([
        '2026-10-25T00:30:00.000Z',
        '2026-10-25T01:30:00.000Z repeated',
        '2026-10-26T01:30:00.000Z',
      ]);
      const [skipped] = previewFireTimes({ cron: '30 2 * * *', timeZone: zone, dstGap: 'skip' }, utc('2026-03-28T12:00:00Z'), 1);
      expect(skipped).toEqual({ at: utc('2026-03-29T01:00:00Z'), offset: 2 * H, dst: 'skipped', wall: utc('2026-03-29T02:30:00Z') });
    });
    it('a schedule firing every hour keeps the elapsed-time rule whatever the options say', () => {
      for (const opts of [{}, { dstGap: 'skip', dstOverlap: 'first' }, { dstGap: 'shift', dstOverlap: 'both' }] as const) {
        const spec = { cron: '30 * * * *', timeZone: zone, ...opts };
        expect(fireTimesBetween(spec, utc('2026-03-29T00:00:00Z'), utc('2026-03-29T02:00:00Z')).length).toBe(2);
        expect(fireTimesBetween(spec, utc('2026-10-25T00:00:00Z'), utc('2026-10-25T02:00:00Z')).length).toBe(2);
      }
      expect(flags({ cron: '30 * * * *', timeZone: zone }, '2026-10-25T00:00:00Z', 2)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z repeated']);
    });
  });

  describe('America/New_York (gap 2026-03-08 02:00 -> 03:00, overlap 2026-11-01 02:00 -> 01:00)', () => {
    const zone = 'America/New_York';
    it('gap: several wall times in the gap shift to one fire at 03:00 EDT, or are all skipped', () => {
      const cron = '0,20,40 2 * * *';
      expect(flags({ cron, timeZone: zone }, '2026-03-08T06:00:00Z', 2)).toEqual(['2026-03-08T07:00:00.000Z shifted', '2026-03-09T06:00:00.000Z']);
      expect(flags({ cron, timeZone: zone, dstGap: 'skip' }, '2026-03-08T06:00:00Z', 1)).toEqual([
        '2026-03-08T07:00:00.000Z skipped',
        '2026-03-08T07:00:00.000Z skipped',
        '2026-03-08T07:00:00.000Z skipped',
        '2026-03-09T06:00:00.000Z',
      ]);
    });
    it('overlap: both fires every repeated wall time twice, in ascending order', () => {
      expect(flags({ cron: '0,30 1 * * *', timeZone: zone, dstOverlap: 'both' }, '2026-11-01T04:00:00Z', 4)).toEqual([
        '2026-11-01T05:00:00.000Z',
        '2026-11-01T05:30:00.000Z',
        '2026-11-01T06:00:00.000Z repeated',
        '2026-11-01T06:30:00.000Z repeated',
      ]);
      expect(flags({ cron: '0,30 1 * * *', timeZone: zone }, '2026-11-01T04:00:00Z', 3)).toEqual(['2026-11-01T05:00:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:00:00.000Z']);
    });
  });

  describe('Australia/Sydney (overlap 2026-04-05 03:00 -> 02:00, gap 2026-10-04 02:00 -> 03:00)', () => {
    const zone = 'Australia/Sydney';
    it('gap in October and overlap in April, both options', () => {
      expect(flags({ cron: '30 2 * * *', timeZone: zone }, '2026-10-03T12:00:00Z', 1)).toEqual(['2026-10-03T16:00:00.000Z shifted']);
      expect(flags({ cron: '30 2 * * *', timeZone: zone, dstGap: 'skip' }, '2026-10-03T12:00:00Z', 1)).toEqual(['2026-10-03T16:00:00.000Z skipped', '2026-10-04T15:30:00.000Z']);
      expect(flags({ cron: '30 2 * * *', timeZone: zone, dstOverlap: 'both' }, '2026-04-04T12:00:00Z', 2)).toEqual(['2026-04-04T15:30:00.000Z', '2026-04-04T16:30:00.000Z repeated']);
      expect(flags({ cron: '30 2 * * *', timeZone: zone }, '2026-04-04T12:00:00Z', 2)).toEqual(['2026-04-04T15:30:00.000Z', '2026-04-05T16:30:00.000Z']);
    });
  });

  it('refuses unknown values and non-default values on runAt and every, naming the field', () => {
    const field = (spec: ScheduleSpec) => {
      try {
        validateSchedule(spec);
      } catch (e) {
        return (e as ScheduleError).field;
      }
      return undefined;
    };
    expect(field({ cron: '0 0 * * *', timeZone: 'UTC', dstGap: 'later' as never })).toBe('dstGap');
    expect(field({ cron: '0 0 * * *', timeZone: 'UTC', dstOverlap: 'last' as never })).toBe('dstOverlap');
    expect(field({ runAt: 1, timeZone: 'UTC', dstGap: 'skip' })).toBe('dstGap');
    expect(field({ every: 60_000, startAt: 0, timeZone: 'UTC', dstOverlap: 'both' })).toBe('dstOverlap');
    expect(field({ runAt: 1, timeZone: 'UTC', dstGap: 'shift', dstOverlap: 'first' })).toBeUndefined();
  });

  it('reads the stored columns, leaving the defaults out', () => {
    expect(specOf({ cron: '0 0 * * *', runAt: null, timeZone: 'UTC', dstGap: 'skip', dstOverlap: 'both' })).toEqual({ cron: '0 0 * * *', timeZone: 'UTC', dstGap: 'skip', dstOverlap: 'both' });
    expect(specOf({ cron: '0 0 * * *', runAt: null, timeZone: 'UTC', dstGap: 'shift', dstOverlap: 'first' })).toEqual({ cron: '0 0 * * *', timeZone: 'UTC' });
  });
});

describe('previewFireTimes', () => {
  it('gives each fire its offset; runAt and every too', () => {
    expect(previewFireTimes({ runAt: utc('2026-07-01T00:00:00Z'), timeZone: 'Europe/Berlin' }, 0, 5)).toEqual([{ at: utc('2026-07-01T00:00:00Z'), offset: 2 * H }]);
    const every = previewFireTimes({ every: 12 * H, startAt: utc('2026-10-24T12:00:00Z'), timeZone: 'Europe/Berlin' }, utc('2026-10-24T12:00:00Z'), 2);
    expect(every).toEqual([
      { at: utc('2026-10-25T00:00:00Z'), offset: 2 * H },
      { at: utc('2026-10-25T12:00:00Z'), offset: H },
    ]);
  });

  it('finds the rare expressions decades ahead in every zone, the same as fireTimesBetween', () => {
    for (const cron of ['0 0 29 2 *', '0 0 ? 2 1#5']) {
      for (const timeZone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/St_Johns', 'Asia/Kathmandu', 'Australia/Lord_Howe']) {
        const after = utc('2026-01-01T00:00:00Z');
        const preview = previewFireTimes({ cron, timeZone }, after, 1000).map((f) => f.at);
        expect(preview.length).toBeGreaterThan(2);
        expect(preview).toEqual(fireTimesBetween({ cron, timeZone }, after + 1, preview[preview.length - 1] + 1));
      }
    }
    expect(isos(previewFireTimes({ cron: '0 0 ? 2 1#5', timeZone: 'Europe/Berlin' }, utc('2026-01-01T00:00:00Z'), 2).map((f) => f.at))).toEqual([
      '2044-02-28T23:00:00.000Z',
      '2072-02-28T23:00:00.000Z',
    ]);
  });

  it('refuses a count beyond 1,000', () => {
    expect(() => previewFireTimes({ cron: '* * * * *', timeZone: 'UTC' }, 0, 1001)).toThrow(RangeError);
  });
});

describe('day of month and day of week', () => {
  it('are ORed whenever both are restricted, even when one starts with * (Vixie cron would AND */2 with MON)', () => {
    const days = (cron: string) => isos(fireTimesBetween({ cron, timeZone: 'UTC' }, utc('2026-02-01T00:00:00Z'), utc('2026-02-06T00:00:00Z'))).map((s) => s.slice(0, 10));
    expect(days('0 0 1 * MON')).toEqual(['2026-02-01', '2026-02-02']);
    expect(days('0 0 */2 * MON')).toEqual(['2026-02-01', '2026-02-02', '2026-02-03', '2026-02-05']);
    expect(days('0 0 ? * MON')).toEqual(['2026-02-02']);
    expect(days('0 0 * * MON')).toEqual(['2026-02-02']);
  });
});

describe('matching wall times without cron-parser iterating', () => {
  it.each([
    ['0 0 L * 5L'],
    ['0 0 1,15 * MON'],
    ['30 */7 */3 */2 * *'],
    ['0 0 ? 2 1#5', 8],
    ['0 0 29 2 *', 30],
    ['0 15 10 ? * 6L'],
    ['0 0 L 2 ?'],
    ['0 0 1-7 * 1'],
    ['0 12 * * 7'],
    ['0 0 9 1 JAN-MAR,OCT SAT#2'],
    ['*/13 59 23 31 * *'],
  ])('%s gives the instants cron-parser next() gives (UTC)', (cron: string, count = 150) => {
    const from = utc('2024-01-01T00:00:00Z');
    const expr = CronExpressionParser.parse(cron, { tz: 'UTC', currentDate: new Date(from - 1) });
    const expected: number[] = [];
    for (let i = 0; i < count; i++) expected.push(expr.next().getTime());
    expect(fireTimesBetween({ cron, timeZone: 'UTC' }, from, expected[expected.length - 1] + 1)).toEqual(expected);
  });
});
