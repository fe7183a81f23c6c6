import { Injectable, Logger } from '@nestjs/common';
import { TaskMessage } from '@timer/contracts';
import { FINISHED_TASK_STATUSES, FireClaimRepository, FireState } from '@timer/dal';
import { BloomFilter } from '@timer/redis';

export function isSettled(s: FireState): boolean {
  return FINISHED_TASK_STATUSES.includes(s.status);
}

/** Which fires are settled: the bloom filter in Redis as a fast path, the task row as the answer. */
@Injectable()
export class SettledFires {
  private readonly logger = new Logger(SettledFires.name);

  constructor(
    private readonly bloom: BloomFilter,
    private readonly claims: FireClaimRepository,
  ) {}

  /**
   * Bloom fast path: "certainly not settled" is false at once (the claim decides); "maybe" reads the
   * status, so a duplicate of a settled fire costs a read instead of a row-locking UPDATE.
   */
  async isSettled(msg: TaskMessage): Promise<boolean> {
    if (!(await this.maybeSettled(msg))) return false;
    const s = await this.claims.state(msg);
    return s !== null && isSettled(s);
  }

  /** Adds the fire to the bloom filter, in the background (a failure only costs a later read). */
  mark(msg: TaskMessage): void {
    this.bloom.add(msg.fireId, msg.runAt).catch((e: Error) => this.logger.debug(`bloom add failed for ${msg.fireId}: ${e.message}`));
  }

  private async maybeSettled(msg: TaskMessage): Promise<boolean> {
    try {
      return await this.bloom.mightContain(msg.fireId, msg.runAt);
    } catch {
      return false; // the claim fences on its own; Redis only saves work
    }
  }
}
