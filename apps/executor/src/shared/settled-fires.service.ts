import { Injectable } from '@nestjs/common';
import { TaskMessage } from '@timer/contracts';
import { FINISHED_TASK_STATUSES, FireClaimRepository, FireState } from '@timer/dal';

export function isSettled(s: FireState): boolean {
  return FINISHED_TASK_STATUSES.includes(s.status);
}

/**
 * Whether a fire is settled, from its task row. Not asked on the way to a claim: the claim itself
 * refuses a settled fire and returns its state (docs/architecture.md, "executor"); only a message that
 * keeps being handed back for its app's share asks, so a duplicate does not circulate for long.
 */
@Injectable()
export class SettledFires {
  constructor(private readonly claims: FireClaimRepository) {}

  async isSettled(msg: TaskMessage): Promise<boolean> {
    const s = await this.claims.state(msg);
    return s !== null && isSettled(s);
  }
}
