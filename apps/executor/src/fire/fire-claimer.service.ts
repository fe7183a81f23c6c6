import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { hostname } from 'os';
import { randomBytes } from 'crypto';
import { TaskMessage } from '@timer/contracts';
import { ClaimResult, FireClaimRepository, FireState, TaskRepository } from '@timer/dal';
import { ExecutorConfig } from '../config/executor.env';
import { ClaimBatcher } from './claim-batcher.service';
import { TimerCache } from './timer-cache.service';

/**
 * What claiming one attempt found: taken (with the token every later write of it carries), refused
 * (with the row's state then, null when it has no row), or impossible: the fire has no row and its
 * timer is gone, so there is no app to file one under.
 */
export type AttemptClaim = { kind: 'claimed'; token: string } | { kind: 'refused'; state: FireState | null } | { kind: 'timer-not-found' };

/** Takes fires for delivery attempts: the batched claim under a unique token, a missing row re-created, a replay reopened. */
@Injectable()
export class FireClaimer {
  private readonly tokenPrefix = `${hostname().slice(0, 60)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private seq = 0;

  constructor(
    private readonly batcher: ClaimBatcher,
    private readonly claims: FireClaimRepository,
    private readonly tasks: TaskRepository,
    private readonly cache: TimerCache,
    private readonly config: ExecutorConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * An operator replayed this dead letter (`npm run ops -- replay`): its failed row is reopened and
   * the fire delivered as a first attempt. A second replay finds the row no longer failed, and the
   * claim treats it as a duplicate.
   */
  async reopenForReplay(msg: TaskMessage): Promise<TaskMessage> {
    await this.claims.reopenFailed(msg);
    return { ...msg, attempt: 1 };
  }

  async claim(msg: TaskMessage): Promise<AttemptClaim> {
    const token = `${this.tokenPrefix}:${(this.seq = (this.seq + 1) % 1e12)}`;
    let claim = await this.claimOnce(msg, token);
    if (!claim.claimed && claim.state === null) {
      // Rows precede messages, so this should not happen (a delete removed pending rows after the
      // message was published, or a manual clean-up): re-create the row so the fire is recorded.
      const def = await this.cache.get(msg.timerId, true);
      if (!def) return { kind: 'timer-not-found' };
      await this.tasks.insertIgnore([{ app: def.timer.app, timerId: msg.timerId, runAt: msg.runAt }]);
      claim = await this.claimOnce(msg, token);
    }
    return claim.claimed ? { kind: 'claimed', token } : { kind: 'refused', state: claim.state };
  }

  private claimOnce(msg: TaskMessage, token: string): Promise<ClaimResult> {
    return this.batcher.claim({ timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt, token, nowMs: this.clock.now(), leaseMs: this.config.leaseMs });
  }
}
