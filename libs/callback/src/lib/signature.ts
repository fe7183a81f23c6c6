import { createHmac, timingSafeEqual } from 'crypto';

/**
 * The `X-Timer-Signature` value: `t=<ms>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` (DESIGN.md,
 * callback headers). The timestamp is signed so a receiver can refuse replays of old deliveries.
 */
export function signatureHeader(secret: string, timestampMs: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestampMs}.${body}`).digest('hex');
  return `t=${timestampMs},v1=${mac}`;
}

/** For receivers and tests: checks a signature header against the body, in constant time. */
export function verifySignature(secret: string, header: string, body: string, toleranceMs: number, nowMs = Date.now()): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const t = Number(match[1]);
  if (Math.abs(nowMs - t) > toleranceMs) return false;
  const expected = Buffer.from(signatureHeader(secret, t, body).slice(-64), 'hex');
  return timingSafeEqual(expected, Buffer.from(match[2], 'hex'));
}
