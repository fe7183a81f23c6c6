import type { Request } from 'express';
import { isIP } from 'net';

/** The eight 16-bit groups of a valid IPv6 address, as numbers (a dotted IPv4 tail is two groups). */
function ipv6Groups(ip: string): number[] {
  const words = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((w) => {
          if (!w.includes('.')) return [parseInt(w, 16)];
          const [a, b, c, d] = w.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const gap = ip.indexOf('::');
  if (gap < 0) return words(ip);
  const head = words(ip.slice(0, gap));
  const tail = words(ip.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * The address a client's failed authentications are counted under. IPv4 (also as IPv4-mapped IPv6,
 * as a dual-stack socket reports it) counts per address; IPv6 per /64, the block one subscriber
 * usually holds, so hopping between its addresses buys nothing.
 */
export function clientKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const bare = ip.split('%')[0];
  if (isIP(bare) !== 6) return bare;
  const g = ipv6Groups(bare);
  if (g.slice(0, 5).every((w) => w === 0) && g[5] === 0xffff) return [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff].join('.');
  return `${g.slice(0, 4).map((w) => w.toString(16)).join(':')}::/64`;
}

/**
 * The client's address: Express's `req.ip`. `trust proxy` is set to TIMER_TRUSTED_PROXIES
 * (`HttpSetupService`): X-Forwarded-For is read only through those hops, so behind a trusted ingress
 * this is the real client, and a client elsewhere cannot choose it by sending the header.
 */
export const clientAddress = (req: Request): string => clientKey(req.ip ?? req.socket?.remoteAddress);
