import { BlockList, isIP } from 'net';

// Address ranges a callback may not target unless TIMER_CALLBACK_ALLOW_PRIVATE=true: loopback,
// RFC 1918 / RFC 4193 private, link-local (cloud metadata at 169.254.169.254), CGNAT, "this network",
// benchmarking, multicast and reserved. IPv4-mapped IPv6 addresses are matched against the IPv4 rules.
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6');
}

/**
 * True when the URL's host is a literal private/loopback address or a `localhost` name. Only literals:
 * names are not resolved at create time (a name's address can change before the fire; the executor
 * checks the resolved address at call time).
 */
export function isPrivateLiteralHost(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.') return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = isIP(bare);
  if (family === 0) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (PRIVATE.check(bare, type)) return true;
  // NAT64 (64:ff9b::/96) embeds an IPv4 address in the low 32 bits.
  if (type === 'ipv6' && bare.startsWith('64:ff9b::')) {
    const tail = bare.slice('64:ff9b::'.length);
    if (isIP(tail) === 4) return PRIVATE.check(tail, 'ipv4');
  }
  return false;
}
