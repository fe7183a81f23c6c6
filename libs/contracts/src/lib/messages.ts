import { TOPICS } from './topics';

/** A 2-D time slice: one minute (epoch ms of its first instant, UTC) and one hash bucket of it. */
export interface SliceMessage {
  minute: number;
  bucket: number;
  /** Bucket count recorded for this minute, so every role partitions it the same way. */
  buckets: number;
  /**
   * Token of the slice lock the scheduler took for this offer. The trigger extends the lock with
   * it; once a newer offer holds the lock, an older message's holder stops (fencing).
   */
  lockToken: string;
}

/** One fire of a timer. Its identity is (timerId, runAt); `fireId` is `<timerId>-<runAt>`. */
export interface TaskMessage {
  timerId: string;
  runAt: number;
  fireId: string;
  /** 1-based delivery attempt of the callback. */
  attempt: number;
}

/** A range of timer ids for one migrator window, when a window is split across replicas. */
export interface MigrateRangeMessage {
  /** The window, epoch ms [windowStart, windowEnd). */
  windowStart: number;
  windowEnd: number;
  /** Exclusive lower bound of the timer ids; '0' for the first range. */
  fromTimerId: string;
  /** Inclusive upper bound of the timer ids; '' for the last range (no bound). */
  toTimerId: string;
}

/** The payload each topic carries. */
export interface TopicPayloads {
  [TOPICS.slices]: SliceMessage;
  [TOPICS.tasks]: TaskMessage;
  [TOPICS.retries]: TaskMessage;
  [TOPICS.deadLetter]: TaskMessage;
  [TOPICS.migrateRanges]: MigrateRangeMessage;
}

export function fireId(timerId: string, runAt: number): string {
  return `${timerId}-${runAt}`;
}
