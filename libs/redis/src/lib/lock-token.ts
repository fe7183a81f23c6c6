import type Redis from 'ioredis';

/**
 * Fencing helpers for a lock taken by one process (e.g. the scheduler's slice lock) and held by
 * another that only knows its token (the trigger, from `SliceMessage.lockToken`). They address the
 * same key as {@link RedisLock} (`${prefix}lock:${resource}`). Unlike `HeldLock`, they throw on a
 * Redis error, so a caller can tell "no longer ours" from "cannot tell right now".
 */

/** The key RedisLock stores a resource's token under. */
export function lockTokenKey(prefix: string, resource: string): string {
  return `${prefix}lock:${resource}`;
}

/**
 * - `held`: the lock carried the token; its lease now ends `ttlMs` from now.
 * - `reclaimed`: the lock had expired and nobody else took it (and `unlessKeyExists` is absent):
 *   it was set again with the token (only with `reclaimIfFree`).
 * - `lost`: another token holds it, or it is free and may not be reclaimed.
 */
export type LockTokenExtension = 'held' | 'reclaimed' | 'lost';

export interface ExtendLockTokenOptions {
  resource: string;
  token: string;
  ttlMs: number;
  /** Take the lock again with the same token when it expired and is free. Default false. */
  reclaimIfFree?: boolean;
  /** A full key (with prefix) whose existence forbids the reclaim, e.g. the slice's done marker. */
  unlessKeyExists?: string;
}

// KEYS[1] lock, KEYS[2] optional guard; ARGV token, ttl, reclaim flag. 1 held, 2 reclaimed, 0 lost.
const EXTEND = `
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
if v == false and ARGV[3] == '1' then
  if KEYS[2] ~= nil and redis.call('exists', KEYS[2]) == 1 then return 0 end
  redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
return 0`;
/** Deletes the lock only while it holds `token` (ARGV[1]); shared with RedisLock. */
export const RELEASE_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/** Extends a lock by its token (token-checked, atomic). Throws when Redis fails. */
export async function extendLockToken(redis: Redis, prefix: string, options: ExtendLockTokenOptions): Promise<LockTokenExtension> {
  const { resource, token, ttlMs } = options;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw new RangeError(`ttlMs must be a positive integer, got ${ttlMs}`);
  const keys = [lockTokenKey(prefix, resource)];
  if (options.unlessKeyExists) keys.push(options.unlessKeyExists);
  const result = Number(await redis.eval(EXTEND, keys.length, ...keys, token, ttlMs, options.reclaimIfFree ? '1' : '0'));
  return result === 1 ? 'held' : result === 2 ? 'reclaimed' : 'lost';
}

/** Releases a lock if it still carries the token; false when it did not. Throws when Redis fails. */
export async function releaseLockToken(redis: Redis, prefix: string, resource: string, token: string): Promise<boolean> {
  return Number(await redis.eval(RELEASE_SCRIPT, 1, lockTokenKey(prefix, resource), token)) === 1;
}
