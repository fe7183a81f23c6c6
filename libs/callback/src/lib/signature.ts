import { createHmac, timingSafeEqual } from 'crypto';

/**
 * The `X-Timer-Signature` value: `t=<ms>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` (DESIGN.md,
 * callback headers). The timestamp is signed so a receiver can refuse replays of old deliveries.
 * Deprecated in favour of the Standard Webhooks headers ({@link standardWebhookHeaders}); it stays for
 * existing receivers, signed with the app's current secret only.
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

/** Prefix of a Standard Webhooks secret: the rest is the HMAC key, base64. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * The HMAC key of a signing secret as Standard Webhooks verifiers derive it: `whsec_<base64>` is the
 * decoded bytes. A secret issued before the service spoke Standard Webhooks (base64url text without
 * the prefix) is keyed by its UTF-8 bytes, as X-Timer-Signature always was: a stock verifier takes it
 * as `whsec_` + base64 of that text (apps/api/README.md, "Callback signatures").
 */
export function webhookKey(secret: string): Buffer {
  return secret.startsWith(WEBHOOK_SECRET_PREFIX) ? Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** The three Standard Webhooks headers (https://www.standardwebhooks.com/), lower-case names. */
export interface StandardWebhookHeaders {
  'webhook-id': string;
  /** Epoch seconds. */
  'webhook-timestamp': string;
  /** `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` per secret, space-separated. */
  'webhook-signature': string;
}

/**
 * Signs a delivery the Standard Webhooks way with every secret given (the current one first; during
 * a rotation's overlap the previous one too), so a receiver holding either secret verifies it.
 */
export function standardWebhookHeaders(id: string, secrets: readonly string[], timestampMs: number, body: string): StandardWebhookHeaders {
  const timestamp = String(Math.floor(timestampMs / 1000));
  const content = `${id}.${timestamp}.${body}`;
  const signature = secrets.map((s) => `v1,${createHmac('sha256', webhookKey(s)).update(content).digest('base64')}`).join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
}
