import { isPrivateAddress } from './address-policy';

describe('isPrivateAddress', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:7f00:1', '64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '2001:db8::1', '192.0.2.10'])(
    'refuses %s',
    (ip) => expect(isPrivateAddress(ip)).toBe(true),
  );

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])('allows %s', (ip) =>
    expect(isPrivateAddress(ip)).toBe(false),
  );

  it('rejects what is not an IP', () => {
    expect(() => isPrivateAddress('example.com')).toThrow(/not an IP/);
  });
});
