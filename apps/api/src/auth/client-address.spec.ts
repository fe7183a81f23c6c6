import type { Request } from 'express';
import { clientAddress, clientKey } from './client-address';

describe('clientKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0000:0000:0000:0009', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s counts as %s', (ip, key) => expect(clientKey(ip)).toBe(key));
});

describe('clientAddress', () => {
  it("uses Express's req.ip (the TCP peer while trust proxy is off), not X-Forwarded-For", () => {
    const req = { ip: '::ffff:198.51.100.4', headers: { 'x-forwarded-for': '192.0.2.99' }, socket: { remoteAddress: '::ffff:198.51.100.4' } };
    expect(clientAddress(req as unknown as Request)).toBe('198.51.100.4');
  });
});
