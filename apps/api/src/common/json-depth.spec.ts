import { jsonNestsDeeperThan, verifyJsonBody } from './json-depth';

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

describe('verifyJsonBody', () => {
  it('passes shallow JSON in UTF-8 and UTF-16, refuses deep JSON as a 400 body-parser error', () => {
    expect(() => verifyJsonBody(undefined, undefined, utf8('[[1]]'), 'utf-8')).not.toThrow();
    expect(() => verifyJsonBody(undefined, undefined, Buffer.from('[[1]]', 'utf16le'), 'utf-16le')).not.toThrow();
    expect(() => verifyJsonBody(undefined, undefined, utf8('['.repeat(65)), 'utf-8')).toThrow(expect.objectContaining({ status: 400, type: 'entity.too.deep' }));
    expect(() => verifyJsonBody(undefined, undefined, Buffer.from('['.repeat(65), 'utf16le'), 'utf-16le')).toThrow(expect.objectContaining({ type: 'entity.too.deep' }));
  });

  it('refuses a charset it cannot read with 415', () => {
    expect(() => verifyJsonBody(undefined, undefined, utf8('[]'), 'utf-32')).toThrow(expect.objectContaining({ status: 415, type: 'charset.unsupported', charset: 'utf-32' }));
  });
});

describe('verifyJsonBody: input JSON.parse would silently rewrite', () => {
  const refused = (bytes: Buffer) => {
    try {
      verifyJsonBody(undefined, undefined, bytes, 'utf-8');
      return undefined;
    } catch (e) {
      return e as { status: number; type: string; message: string };
    }
  };
  it('refuses bytes that are not UTF-8 instead of reading U+FFFD', () => {
    expect(refused(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).toMatchObject({ status: 400, type: 'entity.refused', message: 'request body is not valid UTF-8' });
  });
  it('passes on what jsonTextProblem finds', () => {
    expect(refused(utf8('{"app":"a","app":"b"}'))).toMatchObject({ status: 400, type: 'entity.refused', message: 'app: duplicate key "app" (each key may be given once)' });
    expect(refused(utf8('{"app":"a"}'))).toBeUndefined();
  });
});
