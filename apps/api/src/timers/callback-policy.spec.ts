import { isPrivateLiteralHost } from './callback-policy';

describe('isPrivateLiteralHost', () => {
  it.each([
    'http://127.0.0.1/x',
    'http://127.1.2.3:8080/',
    'http://2130706433/', // 127.0.0.1 written as one number; the URL parser normalises it
    'http://0x7f.1/',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::1]/',
    'http://[::]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://localhost:3000/',
    'http://LOCALHOST/',
    'http://api.localhost/',
    'http://224.0.0.1/',
    // Documentation ranges: never routable, and the executor refuses them, so the API does too.
    'http://192.0.2.10/',
    'http://[2001:db8::1]/',
    // NAT64 of a loopback address.
    'http://[64:ff9b::127.0.0.1]/',
    // IPv6 forms the executor refuses too (one rule, `isPrivateAddress`): IPv4-compatible, 6to4 of a
    // blocked range, local-use NAT64, site-local, IPv4-mapped and IPv4-translated in other spellings.
    'http://[::127.0.0.1]/',
    'http://[::7f00:1]/',
    'http://[2002:7f00:1::]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[64:ff9b:1::808:808]/',
    'http://[fec0::1]/',
    'http://[::ffff:7f00:1]/',
    'http://[0:0:0:0:0:ffff:127.0.0.1]/',
    'http://[::ffff:0:127.0.0.1]/',
  ])('refuses %s', (url) => expect(isPrivateLiteralHost(url)).toBe(true));

  it.each(['https://example.com/hook', 'http://8.8.8.8/', 'http://172.32.0.1/', 'http://[2606:4700:4700::1111]/', 'http://[64:ff9b::8.8.8.8]/', 'http://[2002:808:808::1]/', 'http://192.169.0.1/', 'http://localhost.example.com/'])(
    'accepts %s',
    (url) => expect(isPrivateLiteralHost(url)).toBe(false),
  );
});
