import type Redis from 'ioredis';

/**
 * One figure per live process in a Redis hash (field: the process, value: `<figure>:<atMs>`), as the
 * heartbeats of {@link ExecutorLag} and {@link TriggerSlots} keep them: written every few seconds by
 * each process, removed when it stops, read back as the figures reported within `freshMs`; a report
 * older than `forgetMs` (of a process that died without removing it) is deleted by the next reader.
 */
export class ProcessReports {
  constructor(
    private readonly redis: Redis,
    readonly key: string,
    private readonly freshMs: number,
    private readonly forgetMs: number,
  ) {}

  /** Records `figure` (rounded, at least 0) as the report of `processId` at `atMs`. */
  async report(processId: string, figure: number, atMs: number): Promise<void> {
    await this.redis.hset(this.key, processId, `${Math.max(0, Math.round(figure))}:${Math.round(atMs)}`);
  }

  /** Removes the report of a process that stops. */
  async remove(processId: string): Promise<void> {
    await this.redis.hdel(this.key, processId);
  }

  /** The figures reported within `freshMs` of `nowMs` (none: an empty list); forgets the old reports. */
  async fresh(nowMs: number): Promise<number[]> {
    const reports = await this.redis.hgetall(this.key);
    const figures: number[] = [];
    const forgotten: string[] = [];
    for (const [processId, value] of Object.entries(reports)) {
      const [figure, at] = value.split(':').map(Number);
      if (!Number.isFinite(figure) || !Number.isFinite(at) || nowMs - at > this.forgetMs) forgotten.push(processId);
      else if (nowMs - at <= this.freshMs) figures.push(figure);
    }
    if (forgotten.length > 0) await this.redis.hdel(this.key, ...forgotten);
    return figures;
  }
}
