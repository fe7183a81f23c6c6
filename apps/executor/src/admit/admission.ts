import { TaskMessage } from '@timer/contracts';
import { ClaimedAttempt, FireResult } from '../shared/fire.types';

/** Why a message goes back to the broker for later (counted in timer_delivery_deferred_total). */
export type DeferReason = 'early' | 'paused' | 'held';

/**
 * The admit stage's answer: the attempt claimed (on to the call), the message to be published again for
 * `at` (the caller publishes it, then `FireAdmission.deferred` counts it), or nothing more to do.
 */
export type Admission =
  | { kind: 'claimed'; attempt: ClaimedAttempt }
  | { kind: 'deferred'; msg: TaskMessage; at: number; recheck: boolean; reason: DeferReason; result: 'deferred-early' | 'deferred-held'; inFlight: boolean }
  | { kind: 'skipped'; result: FireResult };

export function claimed(attempt: ClaimedAttempt): Admission {
  return { kind: 'claimed', attempt };
}

export function deferred(msg: TaskMessage, at: number, recheck: boolean, reason: DeferReason, result: 'deferred-early' | 'deferred-held', inFlight = false): Admission {
  return { kind: 'deferred', msg, at, recheck, reason, result, inFlight };
}

export function skipped(result: FireResult): Admission {
  return { kind: 'skipped', result };
}
