import { lookup as dnsLookup } from 'dns';
import { BlockList, isIP, LookupFunction } from 'net';

// Loopback, private, link-local, shared (CGNAT), documentation/benchmark, multicast and reserved
// ranges: a callback must not reach into the service's own network unless explicitly allowed.
const BLOCKED = new BlockList();
const BLOCKED_V4 = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const;

/** `a.b.c.d` as the two hextets of an IPv6 address (`7f00:1`). */
function hextets(v4: string): string {
  const [a, b, c, d] = v4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

for (const [net, prefix] of BLOCKED_V4) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
  // IPv6 forms that carry an IPv4 address and reach it, judged by that address: IPv4-mapped
  // ::ffff:0:0/96 (written explicitly rather than relying on BlockList's own mapping), IPv4-translated
  // ::ffff:0:0:0/96 (RFC 2765), NAT64 64:ff9b::/96 (RFC 6052) in the low 32 bits, 6to4 2002::/16
  // (RFC 3056) in bits 16-47.
  const v4 = hextets(net);
  BLOCKED.addSubnet(`::ffff:${v4}`, 96 + prefix, 'ipv6');
  BLOCKED.addSubnet(`::ffff:0:${v4}`, 96 + prefix, 'ipv6');
  BLOCKED.addSubnet(`64:ff9b::${v4}`, 96 + prefix, 'ipv6');
  BLOCKED.addSubnet(`2002:${v4}::`, 16 + prefix, 'ipv6');
}
const BLOCKED_V6 = [
  // Unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d (RFC 4291 2.5.5.1), whatever it carries.
  ['::', 96],
  // Local-use NAT64 (RFC 8215): translates into the operator's own IPv4 network.
  ['64:ff9b:1::', 48],
  // Unique local, link-local, deprecated site-local (RFC 3879), multicast, documentation.
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32],
] as const;
for (const [net, prefix] of BLOCKED_V6) BLOCKED.addSubnet(net, prefix, 'ipv6');

/**
 * True for addresses a callback may not reach by default (IPv4-mapped, IPv4-translated, NAT64 and
 * 6to4 addresses are judged by the IPv4 address they carry). The API (at create time, for literal
 * hosts) and the executor (at call time, for every resolved address) both ask this, so they agree.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) throw new Error(`not an IP address: ${address}`);
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class PrivateAddressError extends Error {
  constructor(readonly host: string, readonly address: string) {
    super(`callback to ${host} refused: ${address} is a loopback or private address (set TIMER_CALLBACK_ALLOW_PRIVATE=true to allow)`);
    this.name = 'PrivateAddressError';
  }
}

/**
 * A DNS lookup for the HTTP connector that refuses private addresses. It checks the address the
 * socket will actually connect to, so a name that resolves differently later (DNS rebinding) is
 * caught too.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 4);
    const list = addresses as { address: string; family: number }[];
    const allowed = list.filter((a) => !isPrivateAddress(a.address));
    if (allowed.length === 0) return callback(new PrivateAddressError(hostname, list[0]?.address ?? '?'), '', 4);
    if (options.all) return (callback as unknown as (e: null, a: typeof allowed) => void)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
};
