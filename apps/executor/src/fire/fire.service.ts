import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { hostname } from 'os';
import { randomBytes } from 'crypto';
import { CallbackClient, CallbackMethod, CallbackResult } from '@timer/callback';
import { fireId, TaskMessage } from '@timer/contracts';
import { ClaimResult, FINISHED_TASK_STATUSES, FireRepository, FireState, TaskRepository, TaskStatus, TimerDefinition, TimerStatus } from '@timer/dal';
import { BloomFilter } from '@timer/redis';

import { ExecutorConfig } from '../config/executor.env';
import { retryDelayMs } from './backoff';
import { ClaimBatcher } from './claim-batcher.service';
import { ExecutorMetrics, MissedReason } from './executor.metrics';
import { FirePublisher } from './fire-publisher';
import { misfireDecision } from './misfire';
import { OutcomeRecorder } from './outcome-recorder.service';
import { TimerCache } from './timer-cache.service';

/** A held fire is rechecked this long after its holder's lease ends. */
export const RECHECK_MARGIN_MS = 1_000;
/** Pulsar delivers delayed messages on a tick (1 s by default): an early message comes back this much before run_at. */
export const EARLY_REPUBLISH_LEAD_MS = 1_000;

const METHODS: readonly CallbackMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

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

/** The parsed message, or null when it is not a TaskMessage (logged, acked: redelivery would not help). */
export function parseTaskMessage(raw: unknown): TaskMessage | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const m = raw as Record<string, unknown>;
  if (typeof m.timerId !== 'string' || !/^\d{1,20}$/.test(m.timerId)) return null;
  if (typeof m.runAt !== 'number' || !Number.isSafeInteger(m.runAt)) return null;
  if (typeof m.attempt !== 'number' || !Number.isSafeInteger(m.attempt) || m.attempt < 1 || m.attempt > 1_000) return null;
  return { timerId: m.timerId, runAt: m.runAt, attempt: m.attempt, fireId: fireId(m.timerId, m.runAt) };
}

/**
 * One task message, start to finish (docs/pipeline.md, "executor"): claim (the duplicate fence), the
 * timer's definition, missed / misfire decisions, waiting for run_at, the callback, the outcome
 * (batched), and the retry or dead letter. Resolves once the outcome is durable, so the transport's
 * ack follows invariant 4; throws (the message is nacked) when it is not.
 */
@Injectable()
export class FireService {
  private readonly logger = new Logger(FireService.name);
  private readonly tokenPrefix = `${hostname().slice(0, 60)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private seq = 0;

  constructor(
    private readonly fires: FireRepository,
    private readonly claims: ClaimBatcher,
    private readonly tasks: TaskRepository,
    private readonly cache: TimerCache,
    private readonly recorder: OutcomeRecorder,
    private readonly publisher: FirePublisher,
    private readonly callback: CallbackClient,
    private readonly bloom: BloomFilter,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async handle(raw: unknown, properties: Record<string, string> = {}): Promise<FireResult> {
    let msg = parseTaskMessage(raw);
    if (!msg) {
      this.metrics.invalid.inc();
      this.logger.error(`dropping a message that is not a TaskMessage: ${safeJson(raw)}`);
      return 'invalid';
    }
    const recheck = properties['x-timer-recheck'] === '1';
    // An operator replayed this dead letter (`npm run ops -- replay`): its failed row is reopened and
    // the fire delivered as a first attempt, without the misfire check (late is what was asked for).
    // A second replay finds the row no longer failed, and the claim treats it as a duplicate.
    const replayed = properties['replayed-from'] !== undefined;
    if (replayed) {
      await this.fires.reopenFailed(msg);
      msg = { ...msg, attempt: 1 };
    }

    // Far ahead: hand it back to the broker for later instead of holding a worker (and a claim) for long.
    const ahead = msg.runAt - this.clock.now();
    if (ahead > this.config.maxEarlyWaitMs) {
      await this.publisher.defer(msg, msg.runAt - Math.min(EARLY_REPUBLISH_LEAD_MS, this.config.maxEarlyWaitMs), recheck);
      this.metrics.deferred.inc({ reason: 'early' });
      return 'deferred-early';
    }

    // Bloom fast path: "certainly not settled" goes straight to the claim; "maybe" reads the status
    // first, so a duplicate of a settled fire costs a read instead of a row-locking UPDATE.
    if (await this.maybeSettled(msg)) {
      const s = await this.fires.state(msg);
      if (s && isSettled(s)) return this.duplicate(msg, 'settled', recheck);
    }

    const token = `${this.tokenPrefix}:${(this.seq = (this.seq + 1) % 1e12)}`;
    let claim = await this.claim(msg, token);
    if (!claim.claimed && claim.state === null) {
      // Rows precede messages, so this should not happen (a delete removed pending rows after the
      // message was published, or a manual clean-up): re-create the row so the fire is recorded.
      const def = await this.cache.get(msg.timerId, true);
      if (!def) return this.missedWithoutRow(msg, 'timer_not_found', 'timer not found');
      await this.tasks.insertIgnore([{ app: def.timer.app, timerId: msg.timerId, runAt: msg.runAt }]);
      claim = await this.claim(msg, token);
    }
    if (!claim.claimed) return this.notClaimed(msg, claim.state, recheck);
    return this.deliverClaimed(msg, token, replayed);
  }

  private claim(msg: TaskMessage, token: string): Promise<ClaimResult> {
    return this.claims.claim({ timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt, token, nowMs: this.clock.now(), leaseMs: this.config.leaseMs });
  }

  /** The claim was refused: settled or stale -> duplicate; held by a live claim -> recheck after its lease. */
  private async notClaimed(msg: TaskMessage, s: FireState | null, recheck: boolean): Promise<FireResult> {
    if (s === null) return this.duplicate(msg, 'stale', recheck);
    if (isSettled(s)) {
      this.markSettled(msg);
      return this.duplicate(msg, 'settled', recheck);
    }
    if (s.status === TaskStatus.Running && s.attempt <= msg.attempt) {
      // Another executor holds the fire (or waits for its retry). Acking this message would lose the
      // fire if that executor dies mid-callback before its own message is redelivered and the lease
      // ends; so look again once the lease is over (the holder's result decides then).
      const now = this.clock.now();
      const at = Math.max(s.claimedUntil ?? now, now) + RECHECK_MARGIN_MS;
      await this.publisher.defer(msg, at, true);
      this.metrics.deferred.inc({ reason: 'held' });
      if (!recheck) this.metrics.duplicates.inc({ reason: 'in_flight' });
      this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt} is held by ${s.claimedBy ?? 'a pending retry'}; rechecking at ${at}`);
      return 'deferred-held';
    }
    return this.duplicate(msg, 'stale', recheck);
  }

  private duplicate(msg: TaskMessage, reason: 'settled' | 'stale', recheck: boolean): FireResult {
    if (!recheck) this.metrics.duplicates.inc({ reason });
    this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt}: ${reason}, not delivered again`);
    return 'duplicate';
  }

  /** Runs one claimed attempt to its recorded outcome. */
  private async deliverClaimed(msg: TaskMessage, token: string, replayed = false): Promise<FireResult> {
    const wait = msg.runAt - this.clock.now();
    if (wait > 0) await this.clock.sleep(wait);

    const def = await this.cache.get(msg.timerId);
    if (!def) return this.missed(msg, token, 'timer_not_found', 'timer not found');
    if (def.timer.deletedAt !== null) return this.missed(msg, token, 'timer_deleted', 'timer deleted');
    if (def.timer.status !== TimerStatus.Enabled) return this.missed(msg, token, 'timer_disabled', 'timer disabled');

    const start = this.clock.now();
    const lateness = start - msg.runAt;
    // Retries are late by design (their backoff); the misfire policy judges the first attempt.
    if (msg.attempt === 1 && !replayed) {
      const decision = misfireDecision(def.timer.misfirePolicy, lateness, this.config.misfireWindowMs);
      if (!decision.deliver) return this.missed(msg, token, 'late', decision.reason, lateness);
    }
    this.metrics.lateness.observe(Math.max(0, lateness));

    const result = await this.call(def, msg);
    this.metrics.callbackDuration.observe(result.costMs);
    const base = {
      timerId: msg.timerId,
      runAt: msg.runAt,
      token,
      attempt: msg.attempt,
      httpStatus: result.status ?? null,
      costMs: result.costMs,
      latenessMs: lateness,
      error: result.error ?? null,
      output: result.output ?? null,
    };

    if (result.ok) {
      const applied = await this.recorder.record({ ...base, status: TaskStatus.Succeeded, claimedBy: token, claimedUntil: null });
      if (!applied) return this.fenced(msg);
      this.metrics.deliveries.inc({ outcome: 'succeeded' });
      this.markSettled(msg);
      return 'succeeded';
    }

    const maxAttempts = Math.max(1, def.timer.maxAttempts);
    if (result.retryable && msg.attempt < maxAttempts) {
      const retryAt = this.clock.now() + retryDelayMs(def.timer.backoffMs, msg.attempt);
      // Recorded first (fenced), published second: a crash in between leaves the row waiting for a
      // retry nobody scheduled; this message's redelivery takes the fire over once the lease ends.
      const applied = await this.recorder.record({ ...base, status: TaskStatus.Running, claimedBy: null, claimedUntil: retryAt + this.config.leaseMs });
      if (!applied) return this.fenced(msg);
      await this.publisher.retry({ ...msg, attempt: msg.attempt + 1 }, retryAt);
      this.metrics.retries.inc();
      this.metrics.deliveries.inc({ outcome: 'retry' });
      this.logger.debug(`fire ${msg.fireId} attempt ${msg.attempt} failed (${result.error}); attempt ${msg.attempt + 1} at ${retryAt}`);
      return 'retry';
    }

    // Final: dead-letter first (a crash before the record redelivers and dead-letters again, rather
    // than recording failed with no dead letter), then record failed.
    await this.publisher.deadLetter(msg, {
      'x-timer-error': (result.error ?? 'failed').slice(0, 512),
      'x-timer-http-status': String(result.status ?? ''),
      'x-timer-attempts': String(msg.attempt),
      'x-timer-reason': result.retryable ? 'attempts exhausted' : 'not retryable',
    });
    this.metrics.deadLettered.inc();
    const applied = await this.recorder.record({ ...base, status: TaskStatus.Failed, claimedBy: token, claimedUntil: null });
    if (!applied) return this.fenced(msg);
    this.metrics.deliveries.inc({ outcome: 'failed' });
    this.markSettled(msg);
    this.logger.warn(`fire ${msg.fireId} failed after attempt ${msg.attempt}: ${result.error}`);
    return 'failed';
  }

  private call(def: TimerDefinition, msg: TaskMessage): Promise<CallbackResult> {
    const p = def.timer.notifyHttpParam;
    const method = String(p?.method ?? '').toUpperCase() as CallbackMethod;
    if (!p || typeof p.url !== 'string' || !METHODS.includes(method)) {
      return Promise.resolve({ ok: false, costMs: 0, error: `invalid callback: method ${JSON.stringify(p?.method)}`, retryable: false });
    }
    return this.callback.deliver(
      { url: p.url, method, header: p.header, body: p.body },
      { timerId: msg.timerId, runAt: msg.runAt, attempt: msg.attempt },
      def.signingSecret ?? undefined,
    );
  }

  private async missed(msg: TaskMessage, token: string, reason: MissedReason, text: string, latenessMs: number | null = null): Promise<FireResult> {
    const applied = await this.recorder.record({
      timerId: msg.timerId,
      runAt: msg.runAt,
      token,
      attempt: msg.attempt,
      status: TaskStatus.Missed,
      httpStatus: null,
      costMs: null,
      latenessMs,
      error: text,
      output: null,
      claimedBy: token,
      claimedUntil: null,
    });
    if (!applied) return this.fenced(msg);
    this.metrics.missed.inc({ reason });
    this.markSettled(msg);
    this.logger.log(`fire ${msg.fireId} missed: ${text}`);
    return 'missed';
  }

  /** The timer is gone altogether: there is no app to file a row under. Counted and logged, never silent. */
  private missedWithoutRow(msg: TaskMessage, reason: MissedReason, text: string): FireResult {
    this.metrics.missed.inc({ reason });
    this.logger.warn(`fire ${msg.fireId} missed: ${text} (and no task row to record it in)`);
    return 'missed';
  }

  private fenced(msg: TaskMessage): FireResult {
    this.metrics.fenced.inc();
    this.logger.warn(`fire ${msg.fireId} attempt ${msg.attempt}: the claim passed to another executor (lease expired); outcome dropped, theirs counts`);
    return 'fenced';
  }

  private async maybeSettled(msg: TaskMessage): Promise<boolean> {
    try {
      return await this.bloom.mightContain(msg.fireId, msg.runAt);
    } catch {
      return false; // the claim fences on its own; Redis only saves work
    }
  }

  private markSettled(msg: TaskMessage): void {
    this.bloom.add(msg.fireId, msg.runAt).catch((e: Error) => this.logger.debug(`bloom add failed for ${msg.fireId}: ${e.message}`));
  }
}

function isSettled(s: FireState): boolean {
  return FINISHED_TASK_STATUSES.includes(s.status);
}

function safeJson(v: unknown): string {
  try {
    return (JSON.stringify(v) ?? String(v)).slice(0, 300);
  } catch {
    return String(v).slice(0, 300);
  }
}
