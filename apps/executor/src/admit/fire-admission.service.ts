import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { MESSAGE_PROPERTIES, TaskMessage } from '@timer/contracts';
import { ClaimResult, FireClaimRepository, FireState, TaskRepository, TaskStatus, TimerDefinition } from '@timer/dal';
import { SETTLED_CLAIM } from '@timer/redis';
import { ExecutorConfig } from '../config/executor.env';
import { CallStarts } from './call-starts.service';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { ClaimBatcher } from './claim-batcher.service';
import { ExecutorLiveness, LIVENESS_TTL_MS } from './executor-liveness.service';
import { FirstClaims, HeldClaim } from './first-claims.service';
import { fireDelayOf } from './jitter';
import { InstantDiagnostics } from '../shared/instant-diagnostics';
import { ClaimedAttempt, FireResult } from '../shared/fire.types';
import { Admission, claimed, deferred, skipped } from './admission';
import { PauseWatch } from '../shared/pause-watch.service';
import { isSettled, SettledFires } from '../shared/settled-fires.service';
import { TimerCache } from '../shared/timer-cache.service';

/** A held fire is rechecked this long after its holder's lease ends. */
export const RECHECK_MARGIN_MS = 1_000;
/** Pulsar delivers delayed messages on a tick (1 s by default): an early message comes back this much before run_at. */
export const EARLY_REPUBLISH_LEAD_MS = 1_000;

/**
 * What claiming one attempt found: taken (with the token every later write of it carries; `first`: in
 * Redis, `lost`: just after Redis lost its claims), refused (with the row's state then, null when it has
 * no row), held in Redis by another claim while the row is still pending, or impossible: the fire has no
 * row and its timer is gone, so there is no app to file one under.
 */
type AttemptClaim =
  | { kind: 'claimed'; token: string; first: boolean; lost: boolean; reread?: TimerDefinition }
  | { kind: 'refused'; state: FireState | null }
  | { kind: 'held-first'; token: string; held: HeldClaim }
  | { kind: 'wait'; until: number }
  | { kind: 'timer-not-found' };

/** A fire taken over from a dead holder: the new claim's token, and whether the holder's call may have started. */
interface Takeover {
  token: string;
  mayHaveCalled: boolean;
}

/**
 * The admit stage (docs/architecture.md, "executor"): a replay reopened, the timer's definition read
 * (once for the whole fire), a message far ahead of run_at or of a paused app deferred, then the claim
 * (the duplicate fence); a duplicate of a settled fire is skipped, a fire held by a live claim deferred
 * as a recheck after its lease. The claim carries a unique token (every later write of the attempt is
 * fenced by it); a missing row is re-created, a replay reopened, a fire whose holder died taken over.
 * Publishes nothing: a deferral is returned to the caller.
 */
@Injectable()
export class FireAdmission {
  private readonly logger = new Logger(FireAdmission.name);

  constructor(
    private readonly batcher: ClaimBatcher,
    private readonly claims: FireClaimRepository,
    private readonly tasks: TaskRepository,
    private readonly liveness: ExecutorLiveness,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly pauses: PauseWatch,
    private readonly cache: TimerCache,
    private readonly calls: CallStarts,
    @Optional() private readonly diag?: InstantDiagnostics,
    @Optional() private readonly settled?: SettledFires,
    @Optional() private readonly first?: FirstClaims,
  ) {}

  /** `redelivered`: the broker delivered this message before (an executor died or nacked it). */
  async admit(message: TaskMessage, properties: Record<string, string>, redelivered = false): Promise<Admission> {
    let msg = message;
    const recheck = properties[MESSAGE_PROPERTIES.recheck] === '1';
    // A replayed dead letter or a run now is delivered without the misfire check (late is what was asked for).
    const replayed = properties[MESSAGE_PROPERTIES.replayedFrom] !== undefined;
    const onDemand = replayed || properties[MESSAGE_PROPERTIES.runNow] === '1';
    if (replayed) msg = await this.reopenForReplay(msg);

    // The definition, read once for the fire: before the claim for a scheduled first attempt (its
    // jitter, its app's pause), once claimed for the others.
    const firstRun = !onDemand && msg.attempt === 1;
    const def = firstRun ? (this.cache.peek(msg.timerId) ?? (await this.cache.get(msg.timerId))) : undefined;
    // Far ahead (of run_at plus the fire's jitter): back to the broker for later instead of holding a
    // worker (and a claim) for long.
    const due = firstRun ? msg.runAt + fireDelayOf(msg.fireId, def?.timer) : msg.runAt;
    if (due - this.clock.now() > this.config.maxEarlyWaitMs) {
      return deferred(msg, due - Math.min(EARLY_REPUBLISH_LEAD_MS, this.config.maxEarlyWaitMs), recheck, 'early', 'deferred-early');
    }

    // A first attempt of a paused app's fire, unless asked for (run now, replay, backfill; a recheck is of a fire already claimed).
    if (!onDemand && !msg.backfill && !recheck && msg.attempt === 1 && this.pauses.any) {
      const paused = this.paused(msg, def ?? null);
      if (paused) return paused;
    }

    // A message that may repeat a settled fire (a redelivery, a recheck of a held fire) and that the
    // bloom filter may have seen is read first: a settled fire is then a duplicate without its claim.
    if ((redelivered || recheck) && this.settled?.screening && (await this.settledBefore(msg, this.settled))) return this.duplicate(msg, 'settled', recheck);

    // With TIMER_CLAIM_STORE=redis a scheduled first attempt looks at its claim in Redis first, and one
    // on time takes it there (not under buffer_one, whose wait in turn renews a MySQL lease): docs/pipeline.md.
    const first = this.first?.enabled === true && firstRun ? this.first : undefined;
    const fresh = first !== undefined && !recheck && !msg.backfill && def != null && def.timer.overlapPolicy !== 'buffer_one' && first.fresh(due);
    const claim = await this.claim(msg, first ? due : null, fresh);
    if (claim.kind === 'timer-not-found') return skipped(this.missedWithoutRow(msg));
    if (claim.kind === 'held-first') return this.heldFirst(msg, claim, recheck, onDemand, def);
    // Redis lost its claims a moment ago: looked at again once the live holders wrote theirs back.
    if (claim.kind === 'wait') return deferred(msg, claim.until, true, 'held', 'deferred-held');
    if (claim.kind === 'refused') {
      // Held by an executor that is gone: take it over now rather than after its lease.
      const taken = await this.takeOverFromDead(msg, claim.state);
      if (taken !== null) {
        const how = taken.mayHaveCalled ? 'its call may have reached the receiver' : 'its call had not started';
        this.logger.warn(`fire ${msg.fireId} attempt ${msg.attempt}: its holder ${claim.state?.claimedBy} is gone; taken over (${how})`);
        return claimed({ msg, token: taken.token, definition: def ?? (await this.definitionOf(msg)), onDemand, redelivery: taken.mayHaveCalled ? 'holder_died' : null });
      }
      return this.notClaimed(msg, claim.state, recheck);
    }
    // A recheck that claims took the fire over from a holder whose lease ran out (whether it called is
    // not known): flagged, and carried on to this claim's own takers; so is a claim that Redis's loss
    // of its claims may have made twice.
    if (recheck || claim.lost) await this.calls.carry(claim.token);
    this.diag?.claimed(msg.runAt);
    const redelivery = recheck ? 'lease_expired' : claim.lost ? 'claim_lost' : null;
    return claimed({ msg, token: claim.token, definition: claim.reread ?? def ?? (await this.definitionOf(msg)), onDemand, redelivery, firstClaim: claim.first || undefined });
  }

  /**
   * An attempt claimed here whose call never started: its claim is given back, so the message's
   * redelivery takes it at once instead of after the lease. A claim in MySQL keeps its token and
   * attempt and only its lease ends now (the claim's own rule for a holder that died); never throws.
   */
  async giveBack(attempt: ClaimedAttempt): Promise<void> {
    if (attempt.firstClaim) return this.first?.giveBack(attempt.msg.fireId);
    const { timerId, runAt, fireId } = attempt.msg;
    await this.claims
      .extend({ timerId, runAt }, attempt.token, this.clock.now() - 1)
      .catch((e: Error) => this.logger.warn(`giving back the claim of fire ${fireId} failed (it runs out its lease): ${e.message}`));
  }

  /** Counts a deferral once its message is stored by the broker. */
  deferred(d: Extract<Admission, { kind: 'deferred' }>): void {
    this.metrics.deferred.inc({ reason: d.reason });
    if (d.inFlight) this.metrics.duplicates.inc({ reason: 'in_flight' });
  }

  /**
   * The definition a claimed attempt is called with, read once here: an edit that lands while it waits
   * for run_at does not change what this attempt calls.
   */
  private async definitionOf(msg: TaskMessage): Promise<TimerDefinition | null> {
    return this.cache.peek(msg.timerId) ?? (await this.cache.get(msg.timerId));
  }

  /**
   * A fire in its app's pause is acked without a callback and without a write: its row stays pending
   * until the reconciler or the resume records it missed (`paused`), in bulk (docs/behaviour.md, "Pause").
   * One further ahead than a resume could still reach goes back to the broker until just before its time.
   */
  private paused(msg: TaskMessage, def: TimerDefinition | null): Admission | null {
    if (!def) return null;
    const verdict = this.pauses.verdict(def.timer.app, msg.runAt);
    if (verdict === 'deliver') return null;
    if (verdict === 'later') return deferred(msg, msg.runAt - EARLY_REPUBLISH_LEAD_MS, false, 'paused', 'deferred-early');
    this.pauses.skipped.inc();
    this.logger.debug(`fire ${msg.fireId}: app ${def.timer.app} is paused, not delivered`);
    return skipped('paused');
  }

  /**
   * An operator replayed this dead letter (`npm run ops -- replay`): its failed row is reopened and
   * the fire delivered as a first attempt. A second replay finds the row no longer failed, and the
   * claim treats it as a duplicate.
   */
  private async reopenForReplay(msg: TaskMessage): Promise<TaskMessage> {
    await this.claims.reopenFailed(msg);
    return { ...msg, attempt: 1 };
  }

  /**
   * `due` set: a first attempt that looks at its claim in Redis first (`fresh`: and takes one there when
   * nobody has). Held there while the row is still pending: the Redis claim decides. Found no claim there,
   * or the row moved on (settled, or waiting for a retry), or Redis unreachable: the MySQL claim decides.
   */
  private async claim(msg: TaskMessage, due: number | null, fresh: boolean): Promise<AttemptClaim> {
    const token = this.calls.nextToken();
    if (due !== null && this.first) {
      const r = await this.first.claim(msg, due, fresh ? token : null);
      if (r.kind === 'claimed') return { kind: 'claimed', token, first: true, lost: r.lost };
      if (r.kind === 'wait') return r;
      if (r.kind === 'held') {
        const s = await this.claims.state(msg);
        if (s !== null && s.status === TaskStatus.Pending && s.attempt === 0) return { kind: 'held-first', token, held: r.claim };
      }
    }
    let claim = await this.claimOnce(msg, token);
    if (!claim.claimed && claim.state === null) {
      // Rows precede messages, so this should not happen (a delete removed pending rows after the
      // message was published, or a manual clean-up): re-create the row so the fire is recorded.
      const def = await this.cache.get(msg.timerId, true);
      if (!def) return { kind: 'timer-not-found' };
      await this.tasks.insertIgnore([{ app: def.timer.app, timerId: msg.timerId, runAt: msg.runAt }]);
      claim = await this.claimOnce(msg, token);
      // Called with what was read now: the row was gone because the timer was disabled or deleted meanwhile.
      if (claim.claimed) return { kind: 'claimed', token, first: false, lost: false, reread: def };
    }
    return claim.claimed ? { kind: 'claimed', token, first: false, lost: false } : { kind: 'refused', state: claim.state };
  }

  /**
   * A first attempt whose pending fire another claim holds in Redis: taken over when its lease ran out
   * (flagged `lease_expired`) or its holder is dead (flagged when its call may have started, as a MySQL
   * takeover is); else looked at again once the holder could be known dead or its lease is over.
   */
  private async heldFirst(
    msg: TaskMessage,
    { token, held }: Extract<AttemptClaim, { kind: 'held-first' }>,
    recheck: boolean,
    onDemand: boolean,
    def: TimerDefinition | null | undefined,
  ): Promise<Admission> {
    // Fenced when an edit superseded it (or a calendar excluded it), pending again since: nobody called it.
    if (held.value === SETTLED_CLAIM && this.first && (await this.first.takeOver(msg, held, token))) {
      return claimed({ msg, token, definition: def ?? (await this.definitionOf(msg)), onDemand, redelivery: null, firstClaim: true });
    }
    const now = this.clock.now();
    const expired = held.until <= now;
    if (this.first && (expired || (await this.liveness.isDead(held.token))) && (await this.first.takeOver(msg, held, token))) {
      let mayHaveCalled = true;
      if (expired) await this.calls.carry(token);
      else mayHaveCalled = await this.calls.takenOver(held.token, token);
      this.logger.warn(`fire ${msg.fireId}: its claim by ${held.token} ${expired ? 'outlived its lease' : 'belongs to a process that is gone'}; taken over`);
      const redelivery = expired ? 'lease_expired' : mayHaveCalled ? 'holder_died' : null;
      return claimed({ msg, token, definition: def ?? (await this.definitionOf(msg)), onDemand, redelivery, firstClaim: true });
    }
    const at = Math.min(held.until, now + LIVENESS_TTL_MS) + RECHECK_MARGIN_MS;
    this.logger.debug(`fire ${msg.fireId} is held by ${held.token}; rechecking at ${at}`);
    return deferred(msg, at, true, 'held', 'deferred-held', !recheck);
  }

  /**
   * Takes over a fire held (unexpired lease) by an executor process that is gone, so its fire goes
   * out within seconds of the death instead of after the lease. Returns the new claim's token and
   * whether the dead holder's call may have started ({@link CallStarts}), or null when the holder is
   * alive, the fire is not held, or someone else took it first.
   */
  private async takeOverFromDead(msg: TaskMessage, state: FireState | null): Promise<Takeover | null> {
    if (state === null || state.status !== TaskStatus.Running || state.claimedBy === null) return null;
    if (state.attempt > msg.attempt || (state.claimedUntil ?? 0) <= this.clock.now()) return null;
    if (!(await this.liveness.isDead(state.claimedBy))) return null;
    const token = this.calls.nextToken();
    const now = this.clock.now();
    const taken = await this.claims.takeOver({ timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt, token, nowMs: now, leaseMs: this.config.leaseMs }, state.claimedBy);
    if (!taken) return null;
    return { token, mayHaveCalled: await this.calls.takenOver(state.claimedBy, token) };
  }

  /**
   * Whether a fire the bloom filter may have seen is settled, by a plain row read (no row lock, the
   * reads of one turn in one query); false when it has certainly not seen it, or knows nothing.
   */
  private async settledBefore(msg: TaskMessage, settled: SettledFires): Promise<boolean> {
    if ((await settled.screen(msg)) !== 'maybe') return false;
    return settled.confirmed(await settled.state(msg));
  }

  private claimOnce(msg: TaskMessage, token: string): Promise<ClaimResult> {
    return this.batcher.claim({ timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt, token, nowMs: this.clock.now(), leaseMs: this.config.leaseMs });
  }

  /** The claim was refused: settled or stale -> duplicate; held by a live claim -> recheck after its lease. */
  private notClaimed(msg: TaskMessage, s: FireState | null, recheck: boolean): Admission {
    if (s === null) return this.duplicate(msg, 'stale', recheck);
    if (isSettled(s)) {
      return this.duplicate(msg, 'settled', recheck);
    }
    if (s.status === TaskStatus.Running && s.attempt <= msg.attempt) {
      // Another executor holds the fire (or waits for its retry). Acking this message would lose the
      // fire if that executor dies mid-callback before its own message is redelivered; so look again:
      // within the liveness TTL while a process holds it (a dead one is then taken over), once the
      // lease is over for a pending retry (its own message is due then).
      const now = this.clock.now();
      const leaseEnd = Math.max(s.claimedUntil ?? now, now);
      const at = (s.claimedBy !== null ? Math.min(leaseEnd, now + LIVENESS_TTL_MS) : leaseEnd) + RECHECK_MARGIN_MS;
      this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt} is held by ${s.claimedBy ?? 'a pending retry'}; rechecking at ${at}`);
      // A first sight of the held fire counts as a duplicate in flight; its rechecks do not again.
      return deferred(msg, at, true, 'held', 'deferred-held', !recheck);
    }
    return this.duplicate(msg, 'stale', recheck);
  }

  private duplicate(msg: TaskMessage, reason: 'settled' | 'stale', recheck: boolean): Admission {
    if (!recheck) this.metrics.duplicates.inc({ reason });
    this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt}: ${reason}, not delivered again`);
    return skipped('duplicate');
  }

  /** The timer is gone altogether: there is no app to file a row under. Counted and logged, never silent. */
  private missedWithoutRow(msg: TaskMessage): FireResult {
    this.metrics.missed.inc({ reason: 'timer_not_found' });
    this.logger.warn(`fire ${msg.fireId} missed: timer not found (and no task row to record it in)`);
    return 'missed';
  }
}
