import type Redis from 'ioredis';
import { LUA_SCRIPTS } from './lua-scripts';
import { RedisKeys } from './redis-keys';

/**
 * A first attempt takes a new claim in Redis only while it is at most this late (after its due time, run_at
 * plus its jitter); a later one is claimed in MySQL. The claim key outlives this plus the longest early wait, so
 * a message that finds the key expired is always too late to take a new one (docs/pipeline.md). Executors
 * that fall behind (a backlog of tens of seconds) still claim in Redis: with the MySQL claim each fire cost
 * MariaDB a second UPDATE, which slowed the draining of the backlog that caused it.
 */
export const FIRST_CLAIM_FRESH_MS = 90_000;

/**
 * The value of a claim key that fences a fire settled without an attempt (an edit superseded it, a calendar
 * excluded it): a task message already on its way then finds the key held and the row settled, and the fire
 * is not delivered. A fire made pending again later finds this value and takes the key over unflagged.
 */
export const SETTLED_CLAIM = 'settled@0';

/** A fence lives this long past its fire's latest due time (run_at plus the longest jitter): past any new claim of it. */
const FENCE_AFTER_DUE_MS = FIRST_CLAIM_FRESH_MS + 60_000;

/** A fire settled without an attempt; `latestDue`: its run_at plus the longest jitter its timer may give it. */
export interface FireFence {
  fireId: string;
  latestDue: number;
}

/** One fire asked for: `token` claims it when nobody has; null only looks. */
export interface FireClaimAsk {
  fireId: string;
  token: string | null;
}

/** What one ask found: claimed by the ask's token, held by another token, or free (a look that claimed nothing). */
export type FireClaimReply = { kind: 'claimed' } | { kind: 'held'; holder: string } | { kind: 'free' };

/** The replies of a batch, in order, and the claim epoch Redis holds (`created`: it was missing and this batch wrote it). */
export interface FireClaimBatch {
  replies: FireClaimReply[];
  epoch: string;
  created: boolean;
}

interface FireClaimCommands {
  timerTakeOverClaim(key: string, holder: string, token: string, ttlMs: number): Promise<number>;
  timerReleaseClaim(key: string, value: string): Promise<number>;
}

/**
 * The first attempt's claim outside MySQL (TIMER_CLAIM_STORE=redis; docs/pipeline.md): one key per fire
 * ({@link RedisKeys.fireClaim}) holding the claim token, taken with `SET NX` and expiring past any lease.
 * A batch is one pipeline, opened by a `SET NX GET` of the claim epoch ({@link RedisKeys.claimEpoch}): a
 * key without TTL that only a flush (or a Redis that lost its data) removes, so the caller learns when
 * claims may have been lost. A dead holder's claim passes on with a compare-and-set, so two takers cannot
 * both win.
 */
export class FireClaims {
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = new RedisKeys(prefix);
    redis.defineCommand('timerTakeOverClaim', LUA_SCRIPTS.takeOverClaim);
    redis.defineCommand('timerReleaseClaim', LUA_SCRIPTS.deleteIfEqual);
  }

  private get commands(): FireClaimCommands {
    return this.redis as unknown as FireClaimCommands;
  }

  key(fireId: string): string {
    return this.keys.fireClaim(fireId);
  }

  /** Claims (or looks at) each fire in one round trip; `epoch` is written as the claim epoch should none exist. */
  async claimMany(asks: readonly FireClaimAsk[], ttlMs: number, epoch: string): Promise<FireClaimBatch> {
    const pipeline = this.redis.pipeline();
    pipeline.call('SET', this.keys.claimEpoch(), epoch, 'NX', 'GET');
    for (const a of asks) {
      if (a.token === null) pipeline.get(this.key(a.fireId));
      else pipeline.call('SET', this.key(a.fireId), a.token, 'PX', String(Math.max(1, Math.round(ttlMs))), 'NX', 'GET');
    }
    const results = (await pipeline.exec()) ?? [];
    const valueAt = (i: number): string | null => {
      const [err, value] = results[i] ?? [new Error('missing pipeline result'), null];
      if (err) throw err;
      return value === null || value === undefined ? null : String(value);
    };
    const old = valueAt(0);
    const replies = asks.map((a, i): FireClaimReply => {
      const holder = valueAt(i + 1);
      if (holder !== null) return { kind: 'held', holder };
      return a.token === null ? { kind: 'free' } : { kind: 'claimed' };
    });
    return { replies, epoch: old ?? epoch, created: old === null };
  }

  /** The claim epoch (written as `epoch` should none exist), and whether it was missing. */
  async epoch(epoch: string): Promise<{ epoch: string; created: boolean }> {
    const old = (await this.redis.call('SET', this.keys.claimEpoch(), epoch, 'NX', 'GET')) as string | null;
    return { epoch: old ?? epoch, created: old === null };
  }

  /**
   * Fences fires settled without an attempt ({@link SETTLED_CLAIM}) where nobody holds their claim yet,
   * until a new claim of them could no longer be taken; one round trip.
   */
  async fence(fires: readonly FireFence[]): Promise<void> {
    if (fires.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const f of fires) pipeline.call('SET', this.key(f.fireId), SETTLED_CLAIM, 'PXAT', String(Math.round(f.latestDue + FENCE_AFTER_DUE_MS)), 'NX');
    for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
  }

  /** Writes each claim again where it is missing (after a loss); per claim, whether it is now there, false where another took the fire. */
  async reassert(claims: readonly { fireId: string; value: string }[], ttlMs: number): Promise<boolean[]> {
    if (claims.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const c of claims) pipeline.call('SET', this.key(c.fireId), c.value, 'PX', String(Math.max(1, Math.round(ttlMs))), 'NX', 'GET');
    const results = (await pipeline.exec()) ?? [];
    return claims.map((c, i) => {
      const [err, value] = results[i] ?? [new Error('missing pipeline result'), null];
      if (err) throw err;
      return value === null || value === undefined || String(value) === c.value;
    });
  }

  /** Gives a claim back while it still holds `value`. */
  async release(fireId: string, value: string): Promise<void> {
    await this.commands.timerReleaseClaim(this.key(fireId), value);
  }

  /** Moves the fire's claim from `holder` (found dead) to `token`; false when `holder` no longer has it. */
  async takeOver(fireId: string, holder: string, token: string, ttlMs: number): Promise<boolean> {
    return Number(await this.commands.timerTakeOverClaim(this.key(fireId), holder, token, Math.max(1, Math.round(ttlMs)))) === 1;
  }
}
