import { createHmac } from 'crypto';
import { signatureHeader, verifySignature } from './signature';

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
});
