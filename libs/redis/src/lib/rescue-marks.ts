import type Redis from 'ioredis';
import { RedisKeys } from './redis-keys';

/**
 * When the reconciler last re-published a fire: `rescued` ({@link RedisKeys}) with a TTL, so a fire that
 * stays overdue (queued behind a backlog, or its timer's callback keeps failing to be claimed) is
 * re-published at most once per TTL, by whichever replica runs the pass.
 *
 * And which pending fires wait in the broker for their return: `handedBack`, written by
 * the executor once a fair-delivery hand-back is stored on the retries topic, expiring some time after
 * the hand-back's return. Such a fire is pending and overdue but not lost; the reconciler leaves it
 * alone while the mark lives, and rescues it like any pending fire once the mark has lapsed.
 */
export class RescueMarks {
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = new RedisKeys(prefix);
  }

  /** Marks each fire id unless marked within `ttlMs`; true where this call set the mark. */
  async mark(fireIds: readonly string[], ttlMs: number): Promise<boolean[]> {
    if (fireIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of fireIds) pipeline.set(this.rescuedKey(id), '1', 'PX', ttlMs, 'NX');
    return this.results(await pipeline.exec(), fireIds.length).map((v) => v === 'OK');
  }

  /** Records that these fires wait in the broker (handed back) for the next `ttlMs`; a later hand-back of the same fire replaces its mark. */
  async handedBack(fireIds: readonly string[], ttlMs: number): Promise<void> {
    if (fireIds.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const id of fireIds) pipeline.set(this.handedBackKey(id), '1', 'PX', Math.max(1, Math.round(ttlMs)));
    this.results(await pipeline.exec(), fireIds.length);
  }

  /** Per fire id, whether a hand-back mark of it lives ({@link handedBack}). */
  async waitingInBroker(fireIds: readonly string[]): Promise<boolean[]> {
    if (fireIds.length === 0) return [];
    // One MGET rather than an EXISTS per fire: the reconciler asks for every overdue pending fire of
    // a pass (up to its page of 1,000 at once), and Redis pays per command.
    const values = await this.redis.mget(fireIds.map((id) => this.handedBackKey(id)));
    return fireIds.map((_, i) => values[i] !== null && values[i] !== undefined);
  }

  rescuedKey(fireId: string): string {
    return this.keys.rescued(fireId);
  }

  handedBackKey(fireId: string): string {
    return this.keys.handedBack(fireId);
  }

  private results(results: [Error | null, unknown][] | null, n: number): unknown[] {
    return Array.from({ length: n }, (_, i) => {
      const [err, value] = results?.[i] ?? [new Error('missing pipeline result'), null];
      if (err) throw err;
      return value;
    });
  }
}
