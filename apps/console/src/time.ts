/** Times as the console shows them: the user's zone on screen, UTC on hover (a title). */

const local = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function utcText(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.000Z$|Z$/, ' UTC');
}

export function localText(ms: number): string {
  return local.format(ms);
}

/** `ms` as a wall-clock time in `zone`, without the zone (the console labels it with the zone's name). */
export function wallText(ms: number, zone: string): string {
  return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium', timeZone: zone }).format(ms);
}

/** `ms` as a wall-clock time in `zone` with its offset ("Mar 29, 2026, 03:00:00 GMT+2"). */
export function zonedText(ms: number, zone: string): string {
  return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long', timeZone: zone }).format(ms);
}

/** The UTC offset of `zone` at `ms`, as Intl names it ("GMT+2", "GMT"). */
export function offsetOf(ms: number, zone: string): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'shortOffset' }).formatToParts(ms).find((p) => p.type === 'timeZoneName');
  return part?.value ?? '';
}

export interface PreviewRow {
  ms: number;
  offset: string;
  /** The offset changed since the fire before (a DST change or another change of the zone's rules). */
  offsetChanged?: { from: string; to: string };
}

/** Upcoming fires in the timer's zone, each marked where the zone's offset differs from the fire before. */
export function previewRows(times: readonly number[], zone: string): PreviewRow[] {
  let before: string | undefined;
  return times.map((ms) => {
    const offset = offsetOf(ms, zone);
    const row: PreviewRow = before !== undefined && before !== offset ? { ms, offset, offsetChanged: { from: before, to: offset } } : { ms, offset };
    before = offset;
    return row;
  });
}

/**
 * A `datetime-local` value (the user's wall clock) as ISO 8601 with the user's offset, the form the API
 * takes for runAt, from and to; undefined for an empty or impossible value.
 */
export function localInputToIso(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return undefined;
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const pad = (n: number) => String(Math.trunc(Math.abs(n))).padStart(2, '0');
  const wall = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${wall}${sign}${pad(off / 60)}:${pad(off % 60)}`;
}

/** The user's IANA zone, the default of a new timer. */
export function userZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}
