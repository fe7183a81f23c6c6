import { createHmac } from 'crypto';
import { signatureHeader, standardWebhookHeaders, verifySignature, webhookKey } from './signature';

describe('callback signature', () => {
  it('is t=<ms>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', () => {
    const expected = createHmac('sha256', 's3cret').update('1700000000000.{"a":1}').digest('hex');
    expect(signatureHeader('s3cret', 1_700_000_000_000, '{"a":1}')).toBe(`t=1700000000000,v1=${expected}`);
  });

  it('verifies the body, the secret and the freshness', () => {
    const header = signatureHeader('k', 1_000_000, 'body');
    expect(verifySignature('k', header, 'body', 60_000, 1_010_000)).toBe(true);
    expect(verifySignature('k', header, 'body!', 60_000, 1_010_000)).toBe(false);
    expect(verifySignature('other', header, 'body', 60_000, 1_010_000)).toBe(false);
    expect(verifySignature('k', header, 'body', 60_000, 2_000_000)).toBe(false);
    expect(verifySignature('k', 'garbage', 'body', 60_000, 1_000_000)).toBe(false);
  });

  it('signs Standard Webhooks content "<id>.<seconds>.<body>" with the decoded key of each secret', () => {
    const key = Buffer.alloc(32, 7);
    const secret = `whsec_${key.toString('base64')}`;
    const h = standardWebhookHeaders('1-2000', [secret, 'plain'], 1_700_000_000_999, 'b');
    const mac = (k: Buffer) => createHmac('sha256', k).update('1-2000.1700000000.b').digest('base64');
    expect(h).toEqual({ 'webhook-id': '1-2000', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,${mac(key)} v1,${mac(Buffer.from('plain'))}` });
    expect(webhookKey(secret)).toEqual(key);
  });
});
