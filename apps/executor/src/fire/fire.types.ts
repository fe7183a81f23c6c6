import { TaskMessage } from '@timer/contracts';

/** What the executor did with one message (for logs and tests). */
export type FireResult =
  | 'invalid'
  | 'deferred-early'
  | 'deferred-held'
  | 'duplicate'
  | 'missed'
  | 'succeeded'
  | 'retry'
  | 'failed'
  | 'fenced';

/** One attempt this executor has claimed: the fence token its writes carry, and whether an operator replayed it. */
export interface ClaimedAttempt {
  /** The message as delivered (a replay's attempt is 1). */
  msg: TaskMessage;
  token: string;
  replayed: boolean;
}
