import { nameProblem, parseIsoInstant, timeZoneSpellingProblem, urlProblem } from './validators';

describe('urlProblem', () => {
  it.each(['https://hooks.example.com/t?a=1#x', 'http://example.com:8080/', 'http://[2606:4700::1]:443/p', 'https://example.com/a@b', 'https://example.com/?to=a@b.c'])('accepts %s', (url) =>
    expect(urlProblem(url)).toBeUndefined(),
  );

  it.each([
    ['user and password', 'http://user:pass@example.com/hook', /credentials/],
    ['user only', 'https://user@example.com/', /credentials/],
    ['empty userinfo', 'http://@example.com/', /credentials/],
    ['userinfo without slashes', 'http:user@example.com/', /credentials/],
    ['password hiding the host', 'http://example.com:80@evil.example/', /credentials/],
    ['CR LF in the path', 'http://example.com/a\r\nX-Injected: 1', /control characters/],
    ['LF in the host', 'http://exam\nple.com/', /control characters/],
    ['TAB', 'http://example.com/\tx', /control characters/],
    ['NUL', 'http://example.com/\0', /control characters/],
    ['DEL', 'http://example.com/\x7f', /control characters/],
    ['port 0', 'http://example.com:0/hook', /port 0/],
    ['port 00', 'http://example.com:00/hook', /port 0/],
    ['port out of range', 'http://example.com:65536/', /absolute http/],
    ['ftp', 'ftp://example.com/', /absolute http/],
    ['relative', '/hook', /absolute http/],
  ])('refuses %s', (_why, url, problem) => expect(urlProblem(url)).toMatch(problem));
});

describe('parseIsoInstant', () => {
  it.each([
    ['2027-02-28T10:00:00Z', Date.UTC(2027, 1, 28, 10)],
    ['2027-02-28T10:00Z', Date.UTC(2027, 1, 28, 10)],
    ['2028-02-29T23:59:59.999Z', Date.UTC(2028, 1, 29, 23, 59, 59, 999)],
    ['2000-02-29T00:00:00z', Date.UTC(2000, 1, 29)],
    ['2027-06-01T12:00:00.123456789+02:00', Date.UTC(2027, 5, 1, 10, 0, 0, 123)],
    ['2027-01-01T00:30:00-05:30', Date.UTC(2027, 0, 1, 6)],
    ['0050-01-01T00:00:00Z', new Date('0050-01-01T00:00:00Z').getTime()],
  ])('reads %s', (text, ms) => expect(parseIsoInstant(text)).toEqual({ ms }));

  it.each([
    ['2027-02-30T10:00:00Z', 'day 30 does not exist in 2027-02'],
    ['2027-02-29T10:00:00Z', 'day 29 does not exist in 2027-02'],
    ['2100-02-29T10:00:00Z', 'day 29 does not exist in 2100-02'],
    ['2027-04-31T10:00:00Z', 'day 31 does not exist in 2027-04'],
    ['2027-06-00T10:00:00Z', 'day 0 does not exist in 2027-06'],
    ['2027-13-01T10:00:00Z', 'month 13 does not exist'],
    ['2027-00-01T10:00:00Z', 'month 0 does not exist'],
    ['2027-02-28T24:00Z', 'hour must be 00-23 (24:00 is not accepted: write 00:00 of the next day)'],
    ['2027-02-28T24:00:00Z', 'hour must be 00-23 (24:00 is not accepted: write 00:00 of the next day)'],
    ['2027-02-28T23:60Z', 'minute must be 00-59'],
    ['2027-02-28T23:59:60Z', 'second must be 00-59'],
    ['2027-02-28T10:00+24:00', 'offset must be within -23:59..+23:59'],
  ])('refuses %s: %s', (text, problem) => expect(parseIsoInstant(text)).toEqual({ problem }));

  it.each(['2027-02-28T10:00:00', '2027-02-28', 'tomorrow', '2027-2-28T10:00Z', ' 2027-02-28T10:00Z'])('leaves %j to the caller (not the accepted shape)', (text) =>
    expect(parseIsoInstant(text)).toBeUndefined(),
  );
});

describe('nameProblem', () => {
  it.each([
    ['   ', 'name must not be blank'],
    ['\t', 'name must not be blank'],
    ['a\u202Eb', 'name must not contain bidirectional control characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)'],
    ['a\u2066b', 'name must not contain bidirectional control characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)'],
    ['a\u0085b', 'name must not contain control characters'],
    ['a\nb', 'name must not contain control characters'],
  ])('refuses %j', (v, problem) => expect(nameProblem('name', v)).toBe(problem));
  it.each(['daily report', 'Bericht für März', '日報', 'a😀'])('accepts %j', (v) => expect(nameProblem('name', v)).toBeUndefined());
});

describe('timeZoneSpellingProblem', () => {
  it.each([
    ['europe/berlin', 'Europe/Berlin'],
    ['EUROPE/BERLIN', 'Europe/Berlin'],
    ['utc', 'UTC'],
    ['america/new_york', 'America/New_York'],
  ])('refuses %j naming %j', (v, canonical) => expect(timeZoneSpellingProblem(v)).toBe(`timeZone ${JSON.stringify(v)} is not spelled as its IANA name: use ${JSON.stringify(canonical)}`));
  it.each(['UTC', 'Europe/Berlin', 'Asia/Kolkata', 'US/Eastern', 'Etc/GMT+5', 'Mars/Base', 42])('accepts %j (unknown zones are the schedule check\'s)', (v) => expect(timeZoneSpellingProblem(v)).toBeUndefined());
});
