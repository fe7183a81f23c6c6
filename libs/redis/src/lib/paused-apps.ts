import type Redis from 'ioredis';
import { LUA_SCRIPTS } from './lua-scripts';
import { RedisKeys } from './redis-keys';

/**
 * How often every executor re-reads the paused apps. The pause of an app reaches the executors within
 * this (plus a round trip); {@link RESUME_MARGIN_MS} must stay well above it.
 */
export const PAUSED_APPS_REFRESH_MS = 500;

/**
 * A resume takes effect this long after it is answered (the resume instant R = now + margin): fires
 * before R are recorded missed, fires from R on are delivered. It covers the executors' refresh
 * ({@link PAUSED_APPS_REFRESH_MS}) and how early a task message may be admitted before its run_at
 * (about 1 s: trigger lead and step, an early message handed back to the broker), so no executor still
 * holding the pause skips a fire at or after R.
 */
export const RESUME_MARGIN_MS = 2_000;

/**
 * A write of the api that MySQL does not show yet (its transaction is still committing) is kept this
 * long by {@link PausedApps.sync}; after that the ledger wins (the transaction rolled back).
 */
export const PAUSE_WRITE_TRUST_MS = 10_000;

/** An app's latest pause as the executors see it: fires with pausedAt <= runAt < resumedAt are not delivered. */
export interface PauseState {
  pausedAt: number;
  /** Null while the pause lasts. */
  resumedAt: number | null;
}

/** A pause as MySQL (the source of truth) has it. */
export interface LedgerPause extends PauseState {
  app: string;
}

/** True when a fire of an app in `state` at `runAt` falls in the pause (and is not to be delivered). */
export function inPause(state: PauseState | undefined, runAt: number): boolean {
  return state !== undefined && runAt >= state.pausedAt && (state.resumedAt === null || runAt < state.resumedAt);
}

/**
 * The paused apps in Redis (`pausedApps`, {@link RedisKeys}), a mirror of `apps.paused_at`/`resumed_at` that
 * every executor reads every {@link PAUSED_APPS_REFRESH_MS}. The api writes it inside its pause and
 * resume transactions (before the commit, so a Redis failure rolls them back); the migrator's
 * reconciler makes it match MySQL every pass (a flushed Redis, a rolled-back transaction), and drops
 * pauses that ended long ago. The one owner of the key.
 */
export class PausedApps {
  readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = new RedisKeys(prefix).pausedApps();
  }

  /** Records that `app` is paused from `pausedAt` on. */
  async pause(app: string, pausedAt: number, writtenAt: number): Promise<void> {
    await this.redis.hset(this.key, app, encode({ pausedAt, resumedAt: null }, writtenAt));
  }

  /** Records the end of the pause that began at `pausedAt`: fires from `resumedAt` on are delivered. */
  async resume(app: string, pausedAt: number, resumedAt: number, writtenAt: number): Promise<void> {
    await this.redis.hset(this.key, app, encode({ pausedAt, resumedAt }, writtenAt));
  }

  /** Every app's pause as recorded (entries that do not parse are left out). */
  async read(): Promise<Map<string, PauseState>> {
    const all = await this.redis.hgetall(this.key);
    const out = new Map<string, PauseState>();
    for (const [app, value] of Object.entries(all)) {
      const state = decode(value);
      if (state) out.set(app, state);
    }
    return out;
  }

  /**
   * Makes the mirror match `ledger` (the pauses MySQL has, read just before): adds and corrects
   * entries, drops those MySQL no longer lists, but keeps for `trustMs` an entry the api has just
   * written ahead of MySQL. Atomic (one script). Returns how many entries it wrote and removed.
   */
  async sync(ledger: readonly LedgerPause[], nowMs: number, trustMs = PAUSE_WRITE_TRUST_MS): Promise<{ written: number; removed: number }> {
    const args: (string | number)[] = [nowMs, trustMs];
    for (const p of ledger) args.push(p.app, String(p.pausedAt), p.resumedAt === null ? '' : String(p.resumedAt));
    const [written, removed] = (await this.redis.eval(LUA_SCRIPTS.syncPausedApps.lua, 1, this.key, ...args)) as [number, number];
    return { written: Number(written), removed: Number(removed) };
  }
}

function encode(s: PauseState, writtenAt: number): string {
  for (const v of [s.pausedAt, s.resumedAt ?? 0, writtenAt]) {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`pause instants must be epoch ms, got ${v}`);
  }
  return `${s.pausedAt}:${s.resumedAt ?? ''}:${writtenAt}`;
}

function decode(value: string): PauseState | null {
  const m = /^(\d+):(\d*):\d+$/.exec(value);
  if (!m) return null;
  return { pausedAt: Number(m[1]), resumedAt: m[2] === '' ? null : Number(m[2]) };
}
