import { jsonNestsDeeperThan, refuseDeepJson } from './json-depth';

const utf8 = (s: string) => Buffer.from(s, 'utf8');

describe('jsonNestsDeeperThan', () => {
  it.each([
    ['{}', 1],
    ['[]', 1],
    ['{"a":[1,{"b":[]}]}', 4],
    ['"[[[[[["', 0],
    ['{"a":"\\"[[[[","b":"\\\\"}', 1], // escaped quote, then an escaped backslash before the closing quote
    ['{"é[":"ü{"}', 1],
    ['42', 0],
  ])('%s is %d deep', (text, depth) => {
    expect(jsonNestsDeeperThan(utf8(text), depth)).toBe(false);
    if (depth > 0) expect(jsonNestsDeeperThan(utf8(text), depth - 1)).toBe(true);
  });

  it('does not let stray closing brackets buy depth', () => {
    expect(jsonNestsDeeperThan(utf8(']]]]' + '['.repeat(5)), 4)).toBe(true);
  });

  it('scans a million levels without recursing', () => {
    expect(jsonNestsDeeperThan(utf8('['.repeat(1_000_000)), 64)).toBe(true);
  });
});

describe('refuseDeepJson', () => {
  it('passes shallow JSON in UTF-8 and UTF-16, refuses deep JSON as a 400 body-parser error', () => {
    expect(() => refuseDeepJson(undefined, undefined, utf8('[[1]]'), 'utf-8')).not.toThrow();
    expect(() => refuseDeepJson(undefined, undefined, Buffer.from('[[1]]', 'utf16le'), 'utf-16le')).not.toThrow();
    expect(() => refuseDeepJson(undefined, undefined, utf8('['.repeat(65)), 'utf-8')).toThrow(expect.objectContaining({ status: 400, type: 'entity.too.deep' }));
    expect(() => refuseDeepJson(undefined, undefined, Buffer.from('['.repeat(65), 'utf16le'), 'utf-16le')).toThrow(expect.objectContaining({ type: 'entity.too.deep' }));
  });

  it('refuses a charset it cannot read with 415', () => {
    expect(() => refuseDeepJson(undefined, undefined, utf8('[]'), 'utf-32')).toThrow(expect.objectContaining({ status: 415, type: 'charset.unsupported', charset: 'utf-32' }));
  });
});
