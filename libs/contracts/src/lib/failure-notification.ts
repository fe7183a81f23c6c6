/**
 * The body of a failure webhook POST (docs/pipeline.md, "Failure notifications"): one entry per
 * dead-lettered fire, up to {@link FAILURE_NOTIFICATIONS_PER_POST} per POST, signed like callbacks
 * (`X-Timer-Signature` over the body with the app's signing secret). Field names are public contract.
 */
export interface FailureNotification {
  /** `<timerId>-<runAtMs>`: the fire's id in records, the DLQ API and `X-Timer-Fire-Id`. */
  fireId: string;
  timerId: string;
  app: string;
  /** Scheduled instant (epoch ms). */
  runAt: number;
  /** `dead-lettered` (the fire failed for good). */
  event: 'dead-lettered';
  /** Why no further attempt is made: `attempts exhausted` or `not retryable`. */
  reason: string;
  /** The last attempt's error (`HTTP 500`, a timeout, a refused address). */
  error: string | null;
  httpStatus: number | null;
  attempts: number;
  /** When the fire was dead-lettered (epoch ms). */
  failedAt: number;
}

export interface FailureNotificationBatch {
  notifications: FailureNotification[];
}

/** Most notifications one webhook POST carries. */
export const FAILURE_NOTIFICATIONS_PER_POST = 100;
