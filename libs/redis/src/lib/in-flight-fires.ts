import type Redis from 'ioredis';
import { LUA_SCRIPTS } from './lua-scripts';
import { RedisKeys } from './redis-keys';

/** What a fire of a timer with an overlap policy may do now. */
export type OverlapTurn =
  /** Nothing else of the timer is in flight: this fire now is (its marker is set). */
  | { kind: 'run' }
  /** `holder` is in flight (or waits for its turn) and this fire may not wait: skip it. */
  | { kind: 'skip'; holder: string }
  /** `holder` is in flight and this fire holds the one waiting place (buffer_one): ask again shortly. */
  | { kind: 'wait'; holder: string };

/**
 * Which fire of a timer is in flight, for the overlap policies (docs/behaviour.md, "Fire policies"):
 * `inFlight` ({@link RedisKeys}) names the fire being delivered (from its callback until it settles,
 * retries included) and `inFlightNext` the one fire waiting for it (buffer_one).
 * Both expire (the holder's lease, a waiter's short TTL), so a dead executor's marker clears itself;
 * a marker naming a fire that settled is dropped by the caller, which asks MySQL.
 */
export class InFlightFires {
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = new RedisKeys(prefix);
  }

  async enter(timerId: string, fireId: string, policy: string, holdMs: number, waitMs: number): Promise<OverlapTurn> {
    const [kind, holder] = (await this.redis.eval(LUA_SCRIPTS.enterInFlight.lua, 2, this.keys.inFlight(timerId), this.keys.inFlightNext(timerId), fireId, holdMs, waitMs, policy)) as [string, string];
    return kind === 'run' ? { kind } : { kind: kind === 'wait' ? 'wait' : 'skip', holder };
  }

  /** Keeps (or puts back) `fireId` as the fire in flight for `holdMs`, unless another fire took its place. */
  async hold(timerId: string, fireId: string, holdMs: number): Promise<boolean> {
    return (await this.redis.eval(LUA_SCRIPTS.holdInFlight.lua, 1, this.keys.inFlight(timerId), fireId, holdMs)) === 1;
  }

  /** `fireId` settled (or was found settled): it is no longer in flight, nor waiting. */
  async release(timerId: string, fireId: string): Promise<void> {
    await this.redis.eval(LUA_SCRIPTS.deleteIfEqual.lua, 1, this.keys.inFlight(timerId), fireId);
    await this.redis.eval(LUA_SCRIPTS.deleteIfEqual.lua, 1, this.keys.inFlightNext(timerId), fireId);
  }
}
