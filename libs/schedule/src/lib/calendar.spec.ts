import { BusinessCalendar, CalendarError, CalendarRules, MAX_BUSINESS_DAY_SEARCH, validateCalendar } from './calendar';

const weekend: CalendarRules = { name: 'weekend', timeZone: null, exclude: { weekdays: [6, 7] } };
const bavaria: CalendarRules = { name: 'by', timeZone: 'Europe/Berlin', exclude: { holidays: [{ country: 'DE', region: 'BY' }] } };
const at = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();

describe('validateCalendar', () => {
  const fieldOf = (zone: unknown, exclude: unknown) => {
    try {
      validateCalendar(zone, exclude);
      return 'ok';
    } catch (e) {
      expect(e).toBeInstanceOf(CalendarError);
      return (e as CalendarError).field;
    }
  };

  it('accepts dates, ranges, holidays with a region and weekdays', () => {
    expect(fieldOf('Europe/Berlin', { dates: ['2026-12-24', { from: '2026-12-27', to: '2026-12-31' }], holidays: [{ country: 'DE', region: 'BY' }, { country: 'US' }], weekdays: [6, 7] })).toBe('ok');
  });

  it('names the field of each mistake', () => {
    expect(fieldOf('Mars/Base', {})).toBe('timeZone');
    expect(fieldOf(undefined, { dates: ['2026-02-30'] })).toBe('exclude.dates[0]');
    expect(fieldOf(undefined, { dates: ['x', { from: '2026-01-02', to: '2026-01-01' }] })).toBe('exclude.dates[0]');
    expect(fieldOf(undefined, { dates: [{ from: '2026-01-02', to: '2026-01-01' }] })).toBe('exclude.dates[0].from');
    expect(fieldOf(undefined, { dates: [{ from: '2026-01-01', to: '2028-01-01' }] })).toBe('exclude.dates[0].to');
    expect(fieldOf(undefined, { holidays: [{ country: 'XX' }] })).toBe('exclude.holidays[0].country');
    expect(fieldOf(undefined, { holidays: [{ country: 'DE', region: 'ZZ' }] })).toBe('exclude.holidays[0].region');
    expect(fieldOf(undefined, { weekdays: [0] })).toBe('exclude.weekdays[0]');
    expect(fieldOf(undefined, { weekends: [6] })).toBe('exclude.weekends');
    expect(fieldOf(undefined, [])).toBe('exclude');
  });
});

describe('BusinessCalendar', () => {
  const daily9 = { cron: '0 9 * * *', timeZone: 'Europe/Berlin' };

  it('excludes a weekend fire with skip, recorded under the calendar name', () => {
    const c = new BusinessCalendar([weekend], 'skip', 'Europe/Berlin');
    const fires = c.firesBetween(daily9, at('2026-11-27T00:00:00Z'), at('2026-12-01T00:00:00Z'));
    expect(fires.map((f) => [iso(f.at), f.excluded ?? null])).toEqual([
      ['2026-11-27T08:00:00.000Z', null],
      ['2026-11-28T08:00:00.000Z', 'weekend'],
      ['2026-11-29T08:00:00.000Z', 'weekend'],
      ['2026-11-30T08:00:00.000Z', null],
    ]);
  });

  it('excludes the public holidays of a country region, read in the calendar zone', () => {
    const c = new BusinessCalendar([bavaria], 'skip', 'UTC');
    // 2026-01-06 (Epiphany) is public in Bavaria; 23:30 UTC on the 5th is already the 6th in Berlin.
    expect(c.excludedBy(at('2026-01-05T23:30:00Z'))).toBe('by');
    expect(c.excludedBy(at('2026-01-05T22:30:00Z'))).toBeUndefined();
    expect(new BusinessCalendar([{ ...bavaria, exclude: { holidays: [{ country: 'DE', region: 'BE' }] } }], 'skip', 'UTC').excludedBy(at('2026-01-06T12:00:00Z'))).toBeUndefined();
  });

  it('moves a month-end fire on a weekend to the next business day at the same wall time, once', () => {
    // 2026-10-31 is a Saturday: the fire goes out on Monday 2 November, 09:00 Berlin (after the DST change).
    const c = new BusinessCalendar([weekend], 'nextBusinessDay', 'Europe/Berlin');
    const monthEnd = { cron: '0 9 L * *', timeZone: 'Europe/Berlin' };
    const fires = c.firesBetween(monthEnd, at('2026-10-01T00:00:00Z'), at('2026-11-05T00:00:00Z'));
    expect(fires).toEqual([{ at: at('2026-11-02T08:00:00Z'), movedFrom: at('2026-10-31T08:00:00Z'), calendar: 'weekend' }]);
    // A window of minutes around the moved fire finds it too: windows agree.
    expect(c.firesBetween(monthEnd, at('2026-11-02T07:59:00Z'), at('2026-11-02T08:01:00Z')).map((f) => f.at)).toEqual([at('2026-11-02T08:00:00Z')]);
    expect(c.nextFireAt(monthEnd, at('2026-10-01T00:00:00Z'))).toBe(at('2026-11-02T08:00:00Z'));
  });

  it('merges moved fires with the fires already on the business day', () => {
    const c = new BusinessCalendar([weekend], 'nextBusinessDay', 'Europe/Berlin');
    const fires = c.firesBetween(daily9, at('2026-11-27T00:00:00Z'), at('2026-12-01T00:00:00Z'));
    expect(fires.map((f) => [iso(f.at), f.movedFrom === undefined])).toEqual([
      ['2026-11-27T08:00:00.000Z', true],
      ['2026-11-30T08:00:00.000Z', true],
    ]);
  });

  it('moves to the previous business day, found from a later window', () => {
    const c = new BusinessCalendar([{ name: 'xmas', timeZone: null, exclude: { dates: [{ from: '2026-12-24', to: '2026-12-26' }] } }, weekend], 'previousBusinessDay', 'UTC');
    const fires = c.firesBetween({ cron: '0 12 25 12 *', timeZone: 'UTC' }, at('2026-12-23T11:00:00Z'), at('2026-12-23T13:00:00Z'));
    expect(fires).toEqual([{ at: at('2026-12-23T12:00:00Z'), movedFrom: at('2026-12-25T12:00:00Z'), calendar: 'xmas' }]);
  });

  it('does not move a fire out of the schedule\'s bounds: past endAt it is excluded instead', () => {
    const c = new BusinessCalendar([weekend], 'nextBusinessDay', 'UTC');
    const spec = { cron: '0 9 L * *', timeZone: 'UTC', endAt: at('2027-02-01T00:00:00Z') };
    // Sunday 31 January 2027 would move to Monday 1 February, after endAt.
    expect(c.firesBetween(spec, at('2027-01-31T00:00:00Z'), at('2027-02-03T00:00:00Z'))).toEqual([{ at: at('2027-01-31T09:00:00Z'), excluded: 'weekend', calendar: 'weekend' }]);
  });

  it('records a fire missed when no business day is within the search', () => {
    const c = new BusinessCalendar([{ name: 'never', timeZone: null, exclude: { weekdays: [1, 2, 3, 4, 5, 6, 7] } }], 'nextBusinessDay', 'UTC');
    expect(c.apply(at('2026-06-01T00:00:00Z'))).toEqual({ at: at('2026-06-01T00:00:00Z'), excluded: 'never', calendar: 'never' });
  });

  it('previews the next fires with the excluded ones among them', () => {
    const c = new BusinessCalendar([weekend], 'skip', 'UTC');
    const fires = c.nextFires({ cron: '0 0 * * *', timeZone: 'UTC' }, at('2026-11-27T12:00:00Z'), 3);
    expect(fires.map((f) => [iso(f.at), f.excluded ?? null])).toEqual([
      ['2026-11-28T00:00:00.000Z', 'weekend'],
      ['2026-11-29T00:00:00.000Z', 'weekend'],
      ['2026-11-30T00:00:00.000Z', null],
    ]);
  });

  it('moves a fire across a DST change to the same wall time, found from a window of minutes on the business day', () => {
    // Europe/Berlin goes to summer time on Sunday 28 March 2027: Saturday 09:00 is 08:00Z, Monday 09:00 is 07:00Z.
    const c = new BusinessCalendar([weekend], 'nextBusinessDay', 'Europe/Berlin');
    expect(c.firesBetween({ cron: '0 9 * * 6', timeZone: 'Europe/Berlin' }, at('2027-03-29T06:50:00Z'), at('2027-03-29T07:10:00Z'))).toEqual([
      { at: at('2027-03-29T07:00:00Z'), movedFrom: at('2027-03-27T08:00:00Z'), calendar: 'weekend' },
    ]);
  });
});

describe('BusinessCalendar bounds', () => {
  const everySecond = { cron: '* * * * * *', timeZone: 'Europe/Berlin' };
  // Every day of 2027 but Monday 20 December.
  const nearlyAll: CalendarRules = { name: 'closed', timeZone: null, exclude: { dates: [{ from: '2027-01-01', to: '2027-12-19' }, { from: '2027-12-21', to: '2027-12-31' }] } };
  const everyDay: CalendarRules = { name: 'never', timeZone: null, exclude: { weekdays: [1, 2, 3, 4, 5, 6, 7] } };

  it(`looks for a business day over at most ${MAX_BUSINESS_DAY_SEARCH} days`, () => {
    const january: CalendarRules = { name: 'january', timeZone: null, exclude: { dates: [{ from: '2027-01-01', to: '2027-01-31' }] } };
    const c = new BusinessCalendar([january], 'nextBusinessDay', 'UTC');
    expect(c.apply(at('2027-01-01T09:00:00Z'))).toEqual({ at: at('2027-02-01T09:00:00Z'), movedFrom: at('2027-01-01T09:00:00Z'), calendar: 'january' });
    const longer = new BusinessCalendar([{ ...january, exclude: { dates: [{ from: '2027-01-01', to: '2027-02-01' }] } }], 'nextBusinessDay', 'UTC');
    expect(longer.apply(at('2027-01-01T09:00:00Z'))).toEqual({ at: at('2027-01-01T09:00:00Z'), excluded: 'january', calendar: 'january' });
    expect(longer.apply(at('2027-01-02T09:00:00Z'))).toEqual({ at: at('2027-02-02T09:00:00Z'), movedFrom: at('2027-01-02T09:00:00Z'), calendar: 'january' });
  });

  it('reads an every-second schedule over a nearly fully excluded year window by window', () => {
    const c = new BusinessCalendar([nearlyAll], 'nextBusinessDay', 'Europe/Berlin');
    // Mid-year no business day is within the search: each fire is recorded missed at its own time.
    const july = c.firesBetween(everySecond, at('2027-07-01T10:00:00Z'), at('2027-07-01T10:10:00Z'));
    expect(july).toHaveLength(600);
    expect(july.every((f) => f.excluded === 'closed' && f.movedFrom === undefined)).toBe(true);
    // On the business day: its own fires, each met by the fires moved from the days before it.
    const business = c.firesBetween(everySecond, at('2027-12-20T10:00:00Z'), at('2027-12-20T10:10:00Z'));
    expect(business).toHaveLength(600);
    expect(business.every((f) => f.excluded === undefined && f.movedFrom === undefined)).toBe(true);
    // The day before it: all moved away, none left.
    expect(c.firesBetween(everySecond, at('2027-12-19T10:00:00Z'), at('2027-12-19T10:10:00Z'))).toEqual([]);
    // Windows evaluated apart agree with one window over both.
    const [a, b, m] = [at('2027-12-19T22:55:00Z'), at('2027-12-19T23:05:00Z'), at('2027-12-19T23:00:00Z')];
    expect([...c.firesBetween(everySecond, a, m), ...c.firesBetween(everySecond, m, b)]).toEqual(c.firesBetween(everySecond, a, b));
  });

  it('previews over a run of excluded days and over days no business day follows, without throwing', () => {
    const moved = new BusinessCalendar([nearlyAll], 'nextBusinessDay', 'Europe/Berlin').nextFires(everySecond, at('2027-11-25T00:00:00Z'), 3);
    // The business day's first fires (each met by the fires moved to it: one fire each).
    expect(moved).toEqual([0, 1, 2].map((s) => ({ at: at(`2027-12-19T23:00:0${s}Z`) })));
    const never = new BusinessCalendar([everyDay], 'nextBusinessDay', 'UTC').nextFires({ cron: '* * * * * *', timeZone: 'UTC' }, at('2027-01-01T00:00:00Z'), 5);
    expect(never.map((f) => [iso(f.at), f.excluded])).toEqual([1, 2, 3, 4, 5].map((s) => [`2027-01-01T00:00:0${s}.000Z`, 'never']));
  });

  it('previews the fires a move would take past endAt as recorded missed, not stepped over', () => {
    // Saturday 28 and Sunday 29 November 2026 excluded; endAt Monday 12:00: a weekend fire after 12:00 stays where it is, missed.
    const c = new BusinessCalendar([weekend], 'nextBusinessDay', 'UTC');
    const fires = c.nextFires({ cron: '0 * * * *', timeZone: 'UTC', endAt: at('2026-11-30T12:00:00Z') }, at('2026-11-27T23:30:00Z'), 1);
    expect(fires).toEqual([{ at: at('2026-11-28T13:00:00Z'), excluded: 'weekend', calendar: 'weekend' }]);
  });

  it('previews a schedule dense after a sparse stretch by narrowing its windows', () => {
    // Every second of 1 and 2 January: a window wide enough to reach them holds 172,800 fires.
    const c = new BusinessCalendar([weekend], 'skip', 'UTC');
    const fires = c.nextFires({ cron: '* * * 1,2 1 *', timeZone: 'UTC' }, at('2027-03-01T00:00:00Z'), 2);
    expect(fires.map((f) => iso(f.at))).toEqual(['2028-01-01T00:00:00.000Z', '2028-01-01T00:00:01.000Z']);
  });
});
