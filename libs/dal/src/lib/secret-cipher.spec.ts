import { SecretCipher, SecretKeyError } from './secret-cipher';

describe('SecretCipher', () => {
  const key = Buffer.alloc(32, 9);
  const cipher = new SecretCipher(key);

  it('seals a secret so that only the same key and app open it', () => {
    const sealed = cipher.seal('billing', 'whsec_abc');
    expect(sealed).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(sealed).not.toContain('whsec_abc');
    expect(cipher.seal('billing', 'whsec_abc')).not.toBe(sealed); // a random IV per value
    expect(cipher.open('billing', sealed)).toBe('whsec_abc');
    expect(() => cipher.open('other', sealed)).toThrow(SecretKeyError);
    expect(() => new SecretCipher(Buffer.alloc(32, 1)).open('billing', sealed)).toThrow(/another TIMER_SECRETS_KEY/);
    expect(() => SecretCipher.PLAIN.open('billing', sealed)).toThrow(/TIMER_SECRETS_KEY is not set/);
  });

  it('reads plain text stored before a key was set, and stores plain text without a key', () => {
    expect(cipher.open('a', 'legacy')).toBe('legacy');
    expect(SecretCipher.PLAIN.seal('a', 'x')).toBe('x');
    expect(SecretCipher.isSealed(cipher.seal('a', 'x'))).toBe(true);
    expect(SecretCipher.isSealed('x')).toBe(false);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new SecretCipher(Buffer.alloc(16))).toThrow(RangeError);
  });
});
