import { truncateUtf8 } from './truncate';

describe('truncateUtf8', () => {
  it('keeps short values and nulls as they are', () => {
    expect(truncateUtf8('hello', 5)).toBe('hello');
    expect(truncateUtf8('', 0)).toBe('');
    expect(truncateUtf8(null, 10)).toBeNull();
    expect(truncateUtf8(undefined, 10)).toBeNull();
  });

  it('cuts to the byte limit, never inside a character', () => {
    expect(truncateUtf8('abcdef', 4)).toBe('abcd');
    // "é" is 2 bytes, "€" 3, "😀" 4 (a surrogate pair in UTF-16).
    expect(truncateUtf8('aé', 2)).toBe('a');
    expect(truncateUtf8('a€', 3)).toBe('a');
    expect(truncateUtf8('a€', 4)).toBe('a€');
    expect(truncateUtf8('😀😀', 7)).toBe('😀');
    expect(truncateUtf8('😀😀', 3)).toBe('');
  });

  it('always fits the limit for long mixed text', () => {
    const s = 'aé€😀'.repeat(5_000);
    for (const max of [0, 1, 2, 3, 4, 5, 1023, 1024, 4096]) {
      const cut = truncateUtf8(s, max);
      expect(Buffer.byteLength(cut, 'utf8')).toBeLessThanOrEqual(max);
      expect(s.startsWith(cut)).toBe(true);
      expect(Buffer.byteLength(cut, 'utf8')).toBeGreaterThan(max - 4);
    }
  });

  it('rejects a negative limit', () => {
    expect(() => truncateUtf8('x', -1)).toThrow(RangeError);
  });
});
