import { parseIsoInstant, urlProblem } from './validators';

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
