import type Redis from 'ioredis';
import { LUA_SCRIPTS } from './lua-scripts';
import { RedisKeys } from './redis-keys';

/**
 * Fencing helpers for a lock taken by one process (e.g. the scheduler's slice lock) and held by
 * another that only knows its token (the trigger, from `SliceMessage.lockToken`). They address the
 * same key as {@link RedisLock} ({@link RedisKeys.lock}). Unlike `HeldLock`, they throw on a
 * Redis error, so a caller can tell "no longer ours" from "cannot tell right now".
 */

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


/** Extends a lock by its token (token-checked, atomic). Throws when Redis fails. */
export async function extendLockToken(redis: Redis, prefix: string, options: ExtendLockTokenOptions): Promise<LockTokenExtension> {
  const { resource, token, ttlMs } = options;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw new RangeError(`ttlMs must be a positive integer, got ${ttlMs}`);
  const keys = [new RedisKeys(prefix).lock(resource)];
  if (options.unlessKeyExists) keys.push(options.unlessKeyExists);
  const result = Number(await redis.eval(LUA_SCRIPTS.extendLockToken.lua, keys.length, ...keys, token, ttlMs, options.reclaimIfFree ? '1' : '0'));
  return result === 1 ? 'held' : result === 2 ? 'reclaimed' : 'lost';
}

/** Releases a lock if it still carries the token; false when it did not. Throws when Redis fails. */
export async function releaseLockToken(redis: Redis, prefix: string, resource: string, token: string): Promise<boolean> {
  return Number(await redis.eval(LUA_SCRIPTS.deleteIfEqual.lua, 1, new RedisKeys(prefix).lock(resource), token)) === 1;
}
