import { isKnownTimeZone, ZoneClock } from './zone-clock';

const utc = (iso: string) => Date.parse(iso);
const H = 3_600_000;

describe('ZoneClock', () => {
  it('knows IANA zones and refuses others', () => {
    expect(isKnownTimeZone('Europe/Berlin')).toBe(true);
    expect(isKnownTimeZone('UTC')).toBe(true);
    expect(isKnownTimeZone('Mars/Base')).toBe(false);
    expect(isKnownTimeZone('')).toBe(false);
  });

  it('reads offsets, including half hours', () => {
    expect(new ZoneClock('Europe/Berlin').offsetAt(utc('2026-01-15T12:00:00Z'))).toBe(H);
    expect(new ZoneClock('Europe/Berlin').offsetAt(utc('2026-07-15T12:00:00Z'))).toBe(2 * H);
    expect(new ZoneClock('Asia/Kolkata').offsetAt(utc('2026-07-15T12:00:00Z'))).toBe(5.5 * H);
    expect(new ZoneClock('America/New_York').offsetAt(utc('2026-01-15T12:00:00Z'))).toBe(-5 * H);
    expect(new ZoneClock('UTC').offsetAt(utc('2026-01-15T12:00:00Z'))).toBe(0);
  });

  it('cuts the time line at transitions, to the second, with the offset before each', () => {
    const clock = new ZoneClock('Europe/Berlin');
    const pieces = [...clock.pieces(utc('2026-03-28T00:00:00Z'), utc('2026-03-30T00:00:00Z'))];
    expect(pieces).toEqual([
      { from: utc('2026-03-28T00:00:00Z'), to: utc('2026-03-29T01:00:00Z'), offset: H, start: undefined, prevOffset: H },
      { from: utc('2026-03-29T01:00:00Z'), to: utc('2026-03-30T00:00:00Z'), offset: 2 * H, start: utc('2026-03-29T01:00:00Z'), prevOffset: H },
    ]);
  });

  it('reports a transition shortly before the range as the start of the first piece', () => {
    const [first] = [...new ZoneClock('America/New_York').pieces(utc('2026-11-01T06:30:00Z'), utc('2026-11-01T08:00:00Z'))];
    expect(first).toEqual({ from: utc('2026-11-01T06:30:00Z'), to: utc('2026-11-01T08:00:00Z'), offset: -5 * H, start: utc('2026-11-01T06:00:00Z'), prevOffset: -4 * H });
  });

  it('yields long constant stretches in bounded pieces that tile the range', () => {
    const from = utc('2026-01-01T00:00:00Z');
    const to = utc('2027-01-01T00:00:00Z');
    const pieces = [...new ZoneClock('Asia/Kolkata').pieces(from, to)];
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces[0].from).toBe(from);
    expect(pieces[pieces.length - 1].to).toBe(to);
    for (let i = 1; i < pieces.length; i++) expect(pieces[i].from).toBe(pieces[i - 1].to);
    expect(new Set(pieces.map((p) => p.offset))).toEqual(new Set([5.5 * H]));
  });

  it.each([
    ['Africa/Casablanca', '2018-01-01', '2027-01-01'], // DST suspended each Ramadan: transitions about a month apart
    ['America/Recife', '2000-01-01', '2001-01-01'], // two transitions 7 days apart (October 2000)
    ['Asia/Gaza', '2040-01-01', '2041-01-01'],
    ['Australia/Lord_Howe', '2025-01-01', '2027-01-01'], // half-hour DST
    ['Asia/Manila', '1844-06-01', '1845-06-01'], // local mean time with seconds, and a skipped day
  ])('gives the offsets Intl gives, day by day and around each transition (%s)', (zone, fromIso, toIso) => {
    const fmt = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    const intl = (t: number) => {
      const m = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(fmt.format(t)) as RegExpExecArray;
      return m[1] === undefined ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0)) * 1000;
    };
    const clock = new ZoneClock(zone);
    let changes = 0;
    for (const p of clock.pieces(utc(`${fromIso}T00:00:00Z`), utc(`${toIso}T00:00:00Z`))) {
      expect([clock.offsetAt(p.from), intl(p.from), intl(p.to - 1000)]).toEqual([p.offset, p.offset, p.offset]);
      if (p.start === p.from) {
        changes++;
        expect(intl(p.from - 1000)).toBe(p.prevOffset);
      }
    }
    for (let t = utc(`${fromIso}T00:00:00Z`); t < utc(`${toIso}T00:00:00Z`); t += 86_400_000) expect(clock.offsetAt(t)).toBe(intl(t));
    expect(changes).toBeGreaterThan(0);
  });
});
