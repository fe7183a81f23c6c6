import type Redis from 'ioredis';

/** What a fire of a timer with an overlap policy may do now. */
export type OverlapTurn =
  /** Nothing else of the timer is in flight: this fire now is (its marker is set). */
  | { kind: 'run' }
  /** `holder` is in flight (or waits for its turn) and this fire may not wait: skip it. */
  | { kind: 'skip'; holder: string }
  /** `holder` is in flight and this fire holds the one waiting place (buffer_one): ask again shortly. */
  | { kind: 'wait'; holder: string };

// KEYS: in-flight, waiting; ARGV: fireId, holdMs, waitMs, policy. A fire runs when nothing is in flight
// and no other fire waits (the waiting one goes first), or it is the one in flight (a redelivery); under
// buffer_one it takes the free waiting place.
const ENTER = `
local cur = redis.call('GET', KEYS[1])
local waiting = redis.call('GET', KEYS[2])
if cur == ARGV[1] or (not cur and (not waiting or waiting == ARGV[1])) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if waiting == ARGV[1] then redis.call('DEL', KEYS[2]) end
  return {'run', ARGV[1]}
end
if cur and cur ~= ARGV[1] and ARGV[4] == 'buffer_one' and (not waiting or waiting == ARGV[1]) then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
  return {'wait', cur}
end
return {'skip', (cur and cur ~= ARGV[1]) and cur or waiting}
`;
const DELETE_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const HOLD = `local cur = redis.call('GET', KEYS[1]) if (not cur) or cur == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0`;

/**
 * Which fire of a timer is in flight, for the overlap policies (docs/behaviour.md, "Fire policies"):
 * `<prefix>in-flight:<timerId>` names the fire being delivered (from its callback until it settles,
 * retries included) and `<prefix>in-flight-next:<timerId>` the one fire waiting for it (buffer_one).
 * Both expire (the holder's lease, a waiter's short TTL), so a dead executor's marker clears itself;
 * a marker naming a fire that settled is dropped by the caller, which asks MySQL.
 */
export class InFlightFires {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async enter(timerId: string, fireId: string, policy: string, holdMs: number, waitMs: number): Promise<OverlapTurn> {
    const [kind, holder] = (await this.redis.eval(ENTER, 2, this.key(timerId), this.waitingKey(timerId), fireId, holdMs, waitMs, policy)) as [string, string];
    return kind === 'run' ? { kind } : { kind: kind === 'wait' ? 'wait' : 'skip', holder };
  }

  /** Keeps (or puts back) `fireId` as the fire in flight for `holdMs`, unless another fire took its place. */
  async hold(timerId: string, fireId: string, holdMs: number): Promise<boolean> {
    return (await this.redis.eval(HOLD, 1, this.key(timerId), fireId, holdMs)) === 1;
  }

  /** `fireId` settled (or was found settled): it is no longer in flight, nor waiting. */
  async release(timerId: string, fireId: string): Promise<void> {
    await this.redis.eval(DELETE_IF, 1, this.key(timerId), fireId);
    await this.redis.eval(DELETE_IF, 1, this.waitingKey(timerId), fireId);
  }

  private key(timerId: string): string {
    return `${this.prefix}in-flight:${timerId}`;
  }

  private waitingKey(timerId: string): string {
    return `${this.prefix}in-flight-next:${timerId}`;
  }
}
