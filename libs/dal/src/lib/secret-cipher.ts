import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'crypto';

/** Prefix of a sealed value: `enc:v1:<key id>:<base64url(iv | tag | ciphertext)>`. */
const SEALED = /^enc:v1:([0-9a-f]{8}):([A-Za-z0-9_-]+)$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stored secret could not be opened: sealed under another key, or with no key configured. */
export class SecretKeyError extends Error {}

/**
 * Seals the apps' callback signing secrets for storage (AES-256-GCM under `TIMER_SECRETS_KEY`, a
 * random IV per value; the app name is bound as associated data, so a sealed value copied to another
 * app's row does not open). Without a key, values are stored and read as plain text. A value stored
 * in plain text (before a key was set) still opens; the api seals such rows at boot.
 */
export class SecretCipher {
  /** A cipher without a key: stores plain text. */
  static readonly PLAIN = new SecretCipher(null);

  private readonly keyId: string | null;

  constructor(private readonly key: Buffer | null) {
    if (key !== null && key.length !== 32) throw new RangeError('the secrets key must be 32 bytes');
    this.keyId = key === null ? null : createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  /** Whether values are sealed when stored. */
  get sealing(): boolean {
    return this.key !== null;
  }

  static isSealed(stored: string): boolean {
    return SEALED.test(stored);
  }

  seal(app: string, secret: string): string {
    if (this.key === null) return secret;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(app, 'utf8'));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `enc:v1:${this.keyId}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** The secret of a stored value; plain text passes through. Throws SecretKeyError when it cannot be opened. */
  open(app: string, stored: string): string {
    const m = SEALED.exec(stored);
    if (!m) return stored;
    if (this.key === null) throw new SecretKeyError(`the signing secret of app ${app} is encrypted and TIMER_SECRETS_KEY is not set`);
    if (m[1] !== this.keyId) throw new SecretKeyError(`the signing secret of app ${app} is encrypted under another TIMER_SECRETS_KEY (key id ${m[1]})`);
    const raw = Buffer.from(m[2], 'base64url');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES)).setAAD(Buffer.from(app, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(`the signing secret of app ${app} does not open with TIMER_SECRETS_KEY (tampered, or sealed for another app)`);
    }
  }

  /** {@link open} for a nullable column. */
  openOrNull(app: string, stored: string | null): string | null {
    return stored === null ? null : this.open(app, stored);
  }
}
