import { localInputToIso, previewRows, utcText } from './time';

describe('console times', () => {
  it('marks the fire after a DST change of the timer zone', () => {
    // Europe/Berlin leaves CET for CEST at 2026-03-29 01:00 UTC.
    const day = 24 * 3_600_000;
    const first = Date.UTC(2026, 2, 28, 8);
    const rows = previewRows([first, first + day, first + 2 * day], 'Europe/Berlin');
    expect(rows.map((r) => r.offset)).toEqual(['GMT+1', 'GMT+2', 'GMT+2']);
    expect(rows.map((r) => r.offsetChanged)).toEqual([undefined, { from: 'GMT+1', to: 'GMT+2' }, undefined]);
  });

  it('shows UTC on hover and sends a datetime-local value with the local offset', () => {
    expect(utcText(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe('2026-01-02 03:04:05 UTC');
    const iso = localInputToIso('2026-07-01T12:30:00');
    expect(iso).toMatch(/^2026-07-01T12:30:00[+-]\d\d:\d\d$/);
    expect(Date.parse(iso!)).toBe(new Date('2026-07-01T12:30:00').getTime());
    expect(localInputToIso('')).toBeUndefined();
  });
});
