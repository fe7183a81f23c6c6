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
});
