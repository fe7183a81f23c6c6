/**
 * The body of a failure webhook POST (docs/behaviour.md, "Failure notifications"): one entry per
 * dead-lettered fire or notified missed fire ({@link MISSED_REASONS_NOTIFIED}), up to {@link FAILURE_NOTIFICATIONS_PER_POST} per POST, signed like callbacks
 * (`X-Timer-Signature` over the body with the app's signing secret). Field names are public contract.
 */
export interface FailureNotification {
  /** `<timerId>-<runAtMs>`: the fire's id in records, the DLQ API and `X-Timer-Fire-Id`. */
  fireId: string;
  timerId: string;
  app: string;
  /** Scheduled instant (epoch ms). */
  runAt: number;
  /** `dead_letter` (the fire failed for good) or `missed` (it was not called: too late). */
  kind: FailureNotificationKind;
  /** `dead-lettered` or `missed`: the same as `kind`, the field's earlier spelling. */
  event: 'dead-lettered' | 'missed';
  /** Why no further attempt is made: `attempts exhausted` or `not retryable`; for a missed fire the record's reason (`late by 61000 ms`). */
  reason: string;
  /** The last attempt's error (`HTTP 500`, a timeout, a refused address). */
  error: string | null;
  httpStatus: number | null;
  /** Attempts made (0 for a missed fire). */
  attempts: number;
  /** When the fire was dead-lettered or recorded missed (epoch ms). */
  failedAt: number;
}

export interface FailureNotificationBatch {
  notifications: FailureNotification[];
}

/** Most notifications one webhook POST carries. */
export const FAILURE_NOTIFICATIONS_PER_POST = 100;

export type FailureNotificationKind = 'dead_letter' | 'missed';

/**
 * The missed reasons (the executor's record reason) that are notified: those the owner did not ask
 * for. `late` (past its catch-up window or misfire policy: the service could not fire it in time) is;
 * `coalesced`, `overlap`, `maintenance` (policies the owner chose), `timer_disabled`, `timer_deleted`
 * and `timer_not_found` (the owner's own act) are not.
 */
export const MISSED_REASONS_NOTIFIED: readonly string[] = ['late'];
