import { Logger } from '@nestjs/common';
import { randomUUID } from 'crypto';
import type Redis from 'ioredis';
import { LUA_SCRIPTS } from './lua-scripts';
import { RedisKeys } from './redis-keys';

export interface LockOptions {
  /** What is locked, one of `LOCK_RESOURCES`; stored under {@link RedisKeys.lock}. */
  resource: string;
  /** Lease; the lock expires by itself if the holder dies. */
  ttlMs: number;
}

/** A held lease. Methods never throw: a Redis error is logged and reported as `false`. */
export interface HeldLock {
  readonly resource: string;
  readonly token: string;
  /** Extends the lease to `ttlMs` from now; false when it is no longer ours. */
  extend(ttlMs: number): Promise<boolean>;
  /** Releases the lease; false when it was no longer ours. */
  release(): Promise<boolean>;
}

/** Distributed lock on one Redis: atomic `SET NX PX` with a random token. */
export class RedisLock {
  private readonly logger = new Logger(RedisLock.name);
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = new RedisKeys(prefix);
  }

  /** Takes the lock or returns `undefined` when someone else holds it (or Redis is unreachable). */
  async tryAcquire({ resource, ttlMs }: LockOptions): Promise<HeldLock | undefined> {
    const key = this.keys.lock(resource);
    const token = randomUUID();
    try {
      const ok = await this.redis.set(key, token, 'PX', ttlMs, 'NX');
      return ok === 'OK' ? this.held(resource, key, token) : undefined;
    } catch (e) {
      this.logger.warn(`lock ${resource}: acquire failed: ${(e as Error).message}`);
      return undefined;
    }
  }

  /**
   * Runs `fn` under the lock and releases it in `finally`. Returns `{ acquired: false }` without
   * running `fn` when the lock is held elsewhere. Errors of `fn` propagate; lock errors never do.
   */
  async withLock<T>(options: LockOptions, fn: (lock: HeldLock) => Promise<T>): Promise<{ acquired: true; value: T } | { acquired: false }> {
    const lock = await this.tryAcquire(options);
    if (!lock) return { acquired: false };
    try {
      return { acquired: true, value: await fn(lock) };
    } finally {
      await lock.release();
    }
  }

  private held(resource: string, key: string, token: string): HeldLock {
    // Token-checked scripts: only the holder may extend or release (a lock that expired and was taken
    // by another replica must not be released by the late first holder).
    const run = async (what: string, script: string, ...args: (string | number)[]) => {
      try {
        return (await this.redis.eval(script, 1, key, token, ...args)) === 1;
      } catch (e) {
        this.logger.warn(`lock ${resource}: ${what} failed: ${(e as Error).message}`);
        return false;
      }
    };
    return {
      resource,
      token,
      extend: (ttlMs) => run('extend', LUA_SCRIPTS.extendLock.lua, ttlMs),
      release: () => run('release', LUA_SCRIPTS.deleteIfEqual.lua),
    };
  }
}
