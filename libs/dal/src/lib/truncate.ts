/**
 * `s` cut to at most `maxBytes` bytes of UTF-8, never inside a character, so a long callback output
 * or error message never fails a write. (Columns count characters; bytes >= characters, so a
 * byte limit equal to the column width always fits.)
 */
export function truncateUtf8(s: string, maxBytes: number): string;
export function truncateUtf8(s: string | null | undefined, maxBytes: number): string | null;
export function truncateUtf8(s: string | null | undefined, maxBytes: number): string | null {
  if (s === null || s === undefined) return null;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError('maxBytes must be a non-negative integer');
  // Fast path: even at 3 bytes per UTF-16 unit (the most any unit encodes to) it fits.
  if (s.length * 3 <= maxBytes) return s;
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= maxBytes) return s;
  let end = maxBytes;
  // Back off over continuation bytes (10xxxxxx) to the start of the character that does not fit.
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}
