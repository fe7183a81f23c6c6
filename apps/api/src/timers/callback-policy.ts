import { isIP } from 'net';
import { isPrivateAddress } from '@timer/callback';

/**
 * True when the URL's host is a literal address the executor would refuse (loopback, private,
 * link-local, documentation and reserved ranges: `isPrivateAddress`, the executor's own rule) or a
 * `localhost` name. Only literals: names are not resolved at create time (a name's address can change
 * before the fire; the executor checks the resolved address at call time).
 */
export function isPrivateLiteralHost(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.') return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isIP(bare) !== 0 && isPrivateAddress(bare);
}
