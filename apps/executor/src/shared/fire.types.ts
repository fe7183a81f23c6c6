import { TaskMessage } from '@timer/contracts';
import { TimerDefinition } from '@timer/dal';

/** What the executor did with one message (for logs and tests). */
export type FireResult =
  | 'invalid'
  | 'deferred-early'
  | 'deferred-held'
  | 'deferred-share'
  | 'duplicate'
  | 'paused'
  | 'missed'
  | 'succeeded'
  | 'retry'
  | 'failed'
  | 'fenced';

/**
 * One attempt this executor has claimed: the fence token its writes carry, whether someone asked for it
 * now, and its timer's definition as the admission read it (the stages after it read no other).
 */
export interface ClaimedAttempt {
  /** The message as delivered (a replay's attempt is 1). */
  msg: TaskMessage;
  token: string;
  /** The definition the attempt was claimed with (null: not found when read); its callback is called with it. */
  definition: TimerDefinition | null;
  /** A replayed dead letter or a run now: delivered however late (the misfire policy does not apply). */
  onDemand: boolean;
  /**
   * Set when an earlier delivery of this attempt may have reached the receiver: its holder died
   * (`holder_died`) or its lease ran out (`lease_expired`). The callback then carries
   * `X-Timer-Redelivery: 1` and the delivery is counted in timer_duplicate_deliveries_total.
   */
  redelivery: RedeliveryReason | null;
  /**
   * Claimed in Redis (a first attempt on time, TIMER_CLAIM_STORE=redis): the row is still pending, and
   * the outcome is written fenced on that (docs/pipeline.md). Absent: claimed in MySQL.
   */
  firstClaim?: boolean;
}

/** `claim_lost`: claimed in Redis just after Redis lost its claims, so an earlier claim may have called. */
export type RedeliveryReason = 'holder_died' | 'lease_expired' | 'claim_lost';
