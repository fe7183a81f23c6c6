import { isPrivateAddress } from './address-policy';

describe('isPrivateAddress', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:7f00:1', '64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '2001:db8::1', '192.0.2.10'])(
    'refuses %s',
    (ip) => expect(isPrivateAddress(ip)).toBe(true),
  );

  it.each([
    // IPv4-compatible (deprecated ::a.b.c.d), whatever it carries.
    ['IPv4-compatible loopback, dotted', '::127.0.0.1'],
    ['IPv4-compatible loopback, hex', '::7f00:1'],
    ['IPv4-compatible private', '::10.0.0.1'],
    ['IPv4-compatible public', '::8.8.8.8'],
    // 6to4 of blocked IPv4 ranges.
    ['6to4 of loopback', '2002:7f00:1::'],
    ['6to4 of loopback, with a host part', '2002:7f00:1:0:1:2:3:4'],
    ['6to4 of 10/8', '2002:a01:203::1'],
    ['6to4 of metadata 169.254.169.254', '2002:a9fe:a9fe::1'],
    ['6to4 of 192.168/16', '2002:c0a8:101::'],
    ['6to4 of 0.0.0.0', '2002::1'],
    // Local-use NAT64, site-local.
    ['local-use NAT64', '64:ff9b:1::808:808'],
    ['local-use NAT64, end of the /48', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'],
    ['site-local', 'fec0::1'],
    ['site-local, end of the /10', 'feff:ffff::1'],
    // IPv4-mapped in every spelling, and IPv4-translated.
    ['IPv4-mapped, hex', '::ffff:7f00:1'],
    ['IPv4-mapped, upper-case hex', '::FFFF:7F00:1'],
    ['IPv4-mapped, full form', '0:0:0:0:0:ffff:7f00:1'],
    ['IPv4-mapped, zero-padded', '0000:0000:0000:0000:0000:ffff:7f00:0001'],
    ['IPv4-mapped, full form dotted', '0:0:0:0:0:ffff:127.0.0.1'],
    ['IPv4-mapped metadata, hex', '::ffff:a9fe:a9fe'],
    ['IPv4-translated loopback', '::ffff:0:7f00:1'],
    ['IPv4-translated private, dotted', '::ffff:0:10.0.0.1'],
  ])('refuses %s (%s)', (_form, ip) => expect(isPrivateAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808', '::ffff:0:808:808', '64:ff9b::808:808', '2002:808:808::1', '64:ff9b:2::1', 'fe7f::1'])(
    'allows %s',
    (ip) => expect(isPrivateAddress(ip)).toBe(false),
  );

  it('rejects what is not an IP', () => {
    expect(() => isPrivateAddress('example.com')).toThrow(/not an IP/);
  });
});
