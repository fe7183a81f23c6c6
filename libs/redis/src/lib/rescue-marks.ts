import type Redis from 'ioredis';

/**
 * When the reconciler last re-published a fire: `<prefix>rescued:<fireId>` with a TTL, so a fire that
 * stays overdue (queued behind a backlog, or its timer's callback keeps failing to be claimed) is
 * re-published at most once per TTL, by whichever replica runs the pass.
 */
export class RescueMarks {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Marks each fire id unless marked within `ttlMs`; true where this call set the mark. */
  async mark(fireIds: readonly string[], ttlMs: number): Promise<boolean[]> {
    if (fireIds.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of fireIds) pipeline.set(`${this.prefix}rescued:${id}`, '1', 'PX', ttlMs, 'NX');
    const results = (await pipeline.exec()) ?? [];
    return fireIds.map((_, i) => {
      const [err, value] = results[i] ?? [new Error('missing pipeline result'), null];
      if (err) throw err;
      return value === 'OK';
    });
  }
}
