/** The part of WebCrypto's `SubtleCrypto` the verifier uses (Node 20+ and browsers have it as `crypto.subtle`). */
export interface HmacSubtle {
  importKey(format: 'raw', keyData: Uint8Array, algorithm: { name: 'HMAC'; hash: 'SHA-256' }, extractable: boolean, usages: ['verify']): Promise<unknown>;
  verify(algorithm: 'HMAC', key: unknown, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
}

export interface VerifyCallbackOptions {
  /** Largest distance between the signed timestamp and now (ms, default 300,000): older deliveries are refused as replays. */
  toleranceMs?: number;
  /** Now in epoch ms (tests). */
  nowMs?: number;
  /** Default: `globalThis.crypto.subtle`. */
  subtle?: HmacSubtle;
}

export const DEFAULT_SIGNATURE_TOLERANCE_MS = 300_000;

const SIGNATURE = /^t=(\d{1,16}),v1=([0-9a-f]{64})$/;

/**
 * Checks a callback's `X-Timer-Signature` (`t=<ms>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, the
 * scheme of libs/callback's signer) against the raw body as received, with WebCrypto (its `verify` compares
 * in constant time), so it needs no Node module and runs in a browser too. False for a missing,
 * malformed, wrong or too old signature.
 */
export async function verifyCallbackSignature(
  secret: string,
  header: string | null | undefined,
  body: string | Uint8Array,
  options: VerifyCallbackOptions = {},
): Promise<boolean> {
  const match = SIGNATURE.exec(header?.trim() ?? '');
  if (!match) return false;
  const t = Number(match[1]);
  if (Math.abs((options.nowMs ?? Date.now()) - t) > (options.toleranceMs ?? DEFAULT_SIGNATURE_TOLERANCE_MS)) return false;
  const subtle = options.subtle ?? (globalThis as { crypto?: { subtle?: HmacSubtle } }).crypto?.subtle;
  if (!subtle) throw new Error('verifyCallbackSignature needs WebCrypto (crypto.subtle): pass options.subtle');
  const enc = new TextEncoder();
  const prefix = enc.encode(`${t}.`);
  const rest = typeof body === 'string' ? enc.encode(body) : body;
  const data = new Uint8Array(prefix.length + rest.length);
  data.set(prefix);
  data.set(rest, prefix.length);
  const key = await subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const mac = new Uint8Array(32);
  for (let i = 0; i < 32; i++) mac[i] = parseInt(match[2].slice(2 * i, 2 * i + 2), 16);
  return subtle.verify('HMAC', key, mac, data);
}
