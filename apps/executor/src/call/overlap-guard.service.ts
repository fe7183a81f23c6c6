import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { parseFireId } from '@timer/contracts';
import { FireClaimRepository, TimerEntity } from '@timer/dal';
import { InFlightFires, OverlapTurn } from '@timer/redis';
import { ExecutorConfig } from '../config/executor.env';
import { RETRY_BACKOFF_CAP_MS, RETRY_JITTER } from '../shared/backoff';
import { ClaimedAttempt } from '../shared/fire.types';
import { isSettled } from '../shared/settled-fires.service';

/** How often a buffered fire asks whether its turn came. */
export const OVERLAP_POLL_MS = 200;
/** A waiting place not renewed for this long is free again (its waiter died). */
const WAIT_TTL_MS = 5_000;

export type OverlapVerdict = { go: true } | { go: false; holder: string };

/**
 * The overlap policies (docs/behaviour.md, "Fire policies"): before its callback a first attempt of a
 * timer with `skip` or `buffer_one` takes the timer's in-flight marker in Redis ({@link InFlightFires}),
 * shared by every executor; it keeps it through its retries and gives it back when it settles. A fire
 * that finds another in flight is skipped, or under `buffer_one` waits in the one waiting place
 * (holding its claim, renewed) until the marker is free. A marker naming a fire that MySQL shows
 * settled (or gone) is stale, e.g. its executor died between the record and the release: it is dropped.
 */
@Injectable()
export class OverlapGuard {
  private readonly logger = new Logger(OverlapGuard.name);

  constructor(
    private readonly fires: InFlightFires,
    private readonly claims: FireClaimRepository,
    private readonly config: ExecutorConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** True when the timer's fires take part (a first attempt of a scheduled fire, not run now or a replay). */
  applies(timer: TimerEntity, attempt: ClaimedAttempt): boolean {
    return (timer.overlapPolicy === 'skip' || timer.overlapPolicy === 'buffer_one') && !attempt.onDemand;
  }

  /** Waits for this fire's turn (buffer_one) or says which fire it is skipped for. */
  async enter(timer: TimerEntity, { msg, token }: ClaimedAttempt): Promise<OverlapVerdict> {
    let renewAt = this.clock.now() + this.config.leaseMs / 3;
    for (;;) {
      let turn: OverlapTurn;
      try {
        turn = await this.fires.enter(timer.id, msg.fireId, timer.overlapPolicy, this.config.leaseMs, WAIT_TTL_MS);
      } catch (e) {
        // Without Redis nothing tells what is in flight: deliver (at least once) rather than fail the message.
        this.logger.warn(`fire ${msg.fireId}: overlap check failed, delivered as under allow: ${(e as Error).message}`);
        return { go: true };
      }
      if (turn.kind === 'run') return { go: true };
      if (await this.stale(turn.holder)) {
        await this.fires.release(timer.id, turn.holder);
        continue;
      }
      if (turn.kind === 'skip') return { go: false, holder: turn.holder };
      // Waiting keeps the claim: renewed well before its lease ends, so nobody takes the fire over.
      if (this.clock.now() >= renewAt) {
        if (!(await this.claims.extend(msg, token, this.clock.now() + this.config.leaseMs))) return { go: true }; // fenced: the outcome write says so
        renewAt = this.clock.now() + this.config.leaseMs / 3;
      }
      await this.clock.sleep(OVERLAP_POLL_MS);
    }
  }

  /** Keeps a retried fire in flight until after its next attempt could have started. */
  async retrying(timer: TimerEntity, { msg }: ClaimedAttempt): Promise<void> {
    const backoff = Math.min(RETRY_BACKOFF_CAP_MS, Math.max(0, timer.backoffMs) * 2 ** Math.max(0, msg.attempt - 1)) * (1 + RETRY_JITTER);
    await this.quietly(() => this.fires.hold(timer.id, msg.fireId, Math.ceil(backoff) + this.config.leaseMs));
  }

  /** A later attempt (a retry) is still the fire in flight: it puts its marker back if it expired. */
  async resume(timer: TimerEntity, { msg }: ClaimedAttempt): Promise<void> {
    await this.quietly(() => this.fires.hold(timer.id, msg.fireId, this.config.leaseMs));
  }

  /** The fire settled: the next one may run. */
  async settled(timer: TimerEntity, { msg }: ClaimedAttempt): Promise<void> {
    await this.quietly(() => this.fires.release(timer.id, msg.fireId));
  }

  private async stale(holder: string): Promise<boolean> {
    const ref = parseFireId(holder);
    if (ref === null) return true;
    const state = await this.claims.state(ref);
    return state === null || isSettled(state);
  }

  // After the outcome is durable a Redis error must not fail the message: the marker expires on its own.
  private async quietly(fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.logger.warn(`in-flight marker update failed (it expires on its own): ${(e as Error).message}`);
    }
  }
}
