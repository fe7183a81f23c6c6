import { ApiError } from '../common/errors';
import { parseIdempotencyKey } from './idempotency-key';

function message(v: string | string[] | undefined): string {
  try {
    parseIdempotencyKey(v);
    return 'accepted';
  } catch (e) {
    if (e instanceof ApiError) return `${e.status} ${e.message}`;
    throw e;
  }
}

describe('parseIdempotencyKey', () => {
  it('takes 1 to 255 printable ASCII characters, and nothing when the header is absent', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('order-42 retry')).toBe('order-42 retry');
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
  });

  it.each([
    ['longer than 255 characters', 'k'.repeat(256), '400 Idempotency-Key header must be at most 255 characters (got 256)'],
    ['empty', '', '400 Idempotency-Key header must be 1-255 printable ASCII characters'],
    ['padded with spaces', ' k ', '400 Idempotency-Key header must be 1-255 printable ASCII characters'],
    ['not ASCII', 'clé', '400 Idempotency-Key header must be 1-255 printable ASCII characters'],
  ])('refuses a key %s, naming the header', (_why, value, expected) => {
    expect(message(value)).toBe(expected);
  });
});
