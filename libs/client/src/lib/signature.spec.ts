import { webcrypto } from 'crypto';
import { signatureHeader } from '@timer/callback';
import { HmacSubtle, verifyCallbackSignature } from './signature';

// Cross-checked against the executor's signer (libs/callback), not against a copy of the scheme.
describe('verifyCallbackSignature', () => {
  const secret = 'whsec_0123456789abcdef';
  const body = '{"orderId":42,"note":"grüße"}';
  const now = 1_767_225_600_000;
  const subtle = webcrypto.subtle as unknown as HmacSubtle;

  it('accepts what libs/callback signs, as a string or as the raw bytes', async () => {
    const header = signatureHeader(secret, now - 1_000, body);
    expect(await verifyCallbackSignature(secret, header, body, { nowMs: now, subtle })).toBe(true);
    expect(await verifyCallbackSignature(secret, header, new TextEncoder().encode(body), { nowMs: now, subtle })).toBe(true);
  });

  it('uses the global WebCrypto when none is given', async () => {
    const g = globalThis as { crypto?: unknown };
    const had = g.crypto;
    g.crypto ??= webcrypto;
    try {
      expect(await verifyCallbackSignature(secret, signatureHeader(secret, now, ''), '', { nowMs: now })).toBe(true);
    } finally {
      g.crypto = had;
    }
  });

  it('refuses another body, another secret, an old timestamp and malformed headers', async () => {
    const header = signatureHeader(secret, now, body);
    expect(await verifyCallbackSignature(secret, header, `${body} `, { nowMs: now, subtle })).toBe(false);
    expect(await verifyCallbackSignature('other-secret', header, body, { nowMs: now, subtle })).toBe(false);
    expect(await verifyCallbackSignature(secret, header, body, { nowMs: now + 300_001, subtle })).toBe(false);
    expect(await verifyCallbackSignature(secret, header, body, { nowMs: now + 10_000, toleranceMs: 5_000, subtle })).toBe(false);
    for (const bad of [undefined, null, '', 'v1=abc', header.toUpperCase(), `${header},v0=x`, header.replace('t=', 't=-')]) {
      expect(await verifyCallbackSignature(secret, bad, body, { nowMs: now, subtle })).toBe(false);
    }
  });
});
