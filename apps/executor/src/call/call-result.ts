import { CallbackResult } from '@timer/callback';
import { FireRef } from '@timer/contracts';
import { TimerDefinition } from '@timer/dal';
import { MissedReason } from '../shared/executor.metrics';
import { ClaimedAttempt } from '../shared/fire.types';

/**
 * Called once the fire's part of its due instant ends (InstantSends, LightFirst): after its outcome is
 * recorded, so the instant's outcome writes wait for its last calls (OutcomeRecorder).
 */
interface InstantTurns {
  instantSent?: () => void;
  instantAnswered?: () => void;
}

/**
 * What the call stage did with a claimed attempt: called (or refused by its origin's state: `sent`
 * false), not called for a reason recorded as missed, or not called because its claim was taken over.
 */
export type CallResult = (
  | {
      kind: 'called';
      attempt: ClaimedAttempt;
      /** The definition it was called with (the claimed one, else the one read after the wait). */
      definition: TimerDefinition;
      result: CallbackResult;
      /** From the fire's target (run_at plus jitter) to the call's start, the origin's wait included. */
      latenessMs: number;
      target: number;
      /** The origin's Retry-After or open circuit: no retry before it. */
      notBefore: number;
      sent: boolean;
      /** The timer's overlap policy holds its in-flight marker for this fire (released once it settles). */
      overlap: boolean;
    }
  | {
      kind: 'not-called';
      attempt: ClaimedAttempt;
      reason: MissedReason;
      text: string;
      latenessMs: number | null;
      /** A maintenance deferral: the fire written at the window's end, published once this one is recorded. */
      deferred?: { due: FireRef[]; inserted: number; windowId: string; end: number };
    }
  | { kind: 'taken-over'; attempt: ClaimedAttempt }
) &
  InstantTurns;

/**
 * The call stage failed before the callback went out (a definition, maintenance or origin read threw):
 * the caller may give the attempt's claim back, so its redelivery need not wait for the lease.
 */
export class NotCalled extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}
