import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { TaskMessage } from '@timer/contracts';
import { ClaimResult, FireClaimRepository, FireState, TaskRepository, TaskStatus } from '@timer/dal';
import { ExecutorConfig } from '../config/executor.env';
import { CallStarts } from './call-starts.service';
import { ClaimBatcher } from './claim-batcher.service';
import { ExecutorLiveness } from './executor-liveness.service';
import { TimerCache } from '../shared/timer-cache.service';

/**
 * What claiming one attempt found: taken (with the token every later write of it carries), refused
 * (with the row's state then, null when it has no row), or impossible: the fire has no row and its
 * timer is gone, so there is no app to file one under.
 */
export type AttemptClaim = { kind: 'claimed'; token: string } | { kind: 'refused'; state: FireState | null } | { kind: 'timer-not-found' };

/** A fire taken over from a dead holder: the new claim's token, and whether the holder's call may have started. */
export interface Takeover {
  token: string;
  mayHaveCalled: boolean;
}

/**
 * Takes fires for delivery attempts: the batched claim under a unique token, a missing row re-created,
 * a replay reopened, and the takeover of a fire whose holder died.
 */
@Injectable()
export class FireClaimer {
  constructor(
    private readonly batcher: ClaimBatcher,
    private readonly claims: FireClaimRepository,
    private readonly tasks: TaskRepository,
    private readonly cache: TimerCache,
    private readonly liveness: ExecutorLiveness,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly config: ExecutorConfig,
    private readonly calls: CallStarts,
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
    const token = this.nextToken();
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

  /**
   * Takes over a fire held (unexpired lease) by an executor process that is gone, so its fire goes
   * out within seconds of the death instead of after the lease. Returns the new claim's token and
   * whether the dead holder's call may have started ({@link CallStarts}), or null when the holder is
   * alive, the fire is not held, or someone else took it first.
   */
  async takeOverFromDead(msg: TaskMessage, state: FireState | null): Promise<Takeover | null> {
    if (state === null || state.status !== TaskStatus.Running || state.claimedBy === null) return null;
    if (state.attempt > msg.attempt || (state.claimedUntil ?? 0) <= this.clock.now()) return null;
    if (!(await this.liveness.isDead(state.claimedBy))) return null;
    const token = this.nextToken();
    const now = this.clock.now();
    const taken = await this.claims.takeOver({ timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt, token, nowMs: now, leaseMs: this.config.leaseMs }, state.claimedBy);
    if (!taken) return null;
    return { token, mayHaveCalled: await this.calls.takenOver(state.claimedBy, token) };
  }

  private nextToken(): string {
    return this.calls.nextToken();
  }

  private claimOnce(msg: TaskMessage, token: string): Promise<ClaimResult> {
    return this.batcher.claim({ timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt, token, nowMs: this.clock.now(), leaseMs: this.config.leaseMs });
  }
}
