import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { FireRef } from '@timer/contracts';
import { FireClaimRepository, FireOutcome, FireOutcomeRepository } from '@timer/dal';
import { Clock, CLOCK } from '@timer/platform';
import { FIRST_CLAIM_FRESH_MS, FireClaimAsk, FireClaims } from '@timer/redis';
import { ExecutorConfig } from '../config/executor.env';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { InstantDiagnostics } from '../shared/instant-diagnostics';
import { LIVENESS_BEAT_MS } from './executor-liveness.service';

/** Asks per pipeline: bounds one write to Redis and how long it holds the server. */
const BATCH_MAX = 1_000;
/** Claims of fires due this long after a detected loss of Redis's claims may have been taken before it. */
const LOSS_MARGIN_MS = 1_000;
/**
 * After a loss is detected, a new claim of a fire that may have been claimed before it waits this long
 * (from the detection): every live executor finds the loss within a beat and writes its claims in flight
 * again, so the fire is then found held by its holder instead of delivered a second time.
 */
export const REASSERT_WAIT_MS = 2 * LIVENESS_BEAT_MS + 500;

/** A first-attempt claim as stored: the token, and when its lease ends. */
export interface HeldClaim {
  /** The key's value as read (what a takeover compares against). */
  value: string;
  token: string;
  /** Lease end, epoch ms. */
  until: number;
}

/**
 * What the first-attempt claim found: taken (`lost`: Redis lost its claims since the fire may have been
 * claimed, so this delivery may repeat one: flagged), held by another claim, or nothing to decide here
 * (a look that found no claim, or Redis unreachable): the MySQL claim decides.
 */
export type FirstClaim = { kind: 'claimed'; lost: boolean } | { kind: 'held'; claim: HeldClaim } | { kind: 'wait'; until: number } | { kind: 'mysql' };

interface Pending {
  ask: FireClaimAsk;
  due: number;
  resolve: (c: FirstClaim) => void;
}

/**
 * The claim of a scheduled first attempt delivered on time, in Redis (TIMER_CLAIM_STORE=redis;
 * docs/pipeline.md): `SET NX` of `<prefix>claim:<fireId>` = `<token>@<lease end>`, expiring past any lease,
 * so the fire's outcome is its only MySQL write, fenced there on the row still being pending. The asks of
 * one event-loop turn share one pipeline. Each pipeline, and a beat every second, also read the claim
 * epoch: found missing or changed, Redis has lost the claims (a flush). Then this process writes its
 * claims in flight again, a fire that may have been claimed before the loss waits {@link REASSERT_WAIT_MS}
 * (its holder's claim is back by then), and for one claim TTL a claim of such a fire is flagged
 * (`claim_lost`). A Redis failure hands the fire to the MySQL claim (at least once; a duplicate is then
 * caught by the outcome's fence and counted).
 */
@Injectable()
export class FirstClaims implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FirstClaims.name);
  private queue: Pending[] = [];
  private scheduled = false;
  /** The claim epoch this process last saw; null before its first batch. */
  private epoch: string | null = null;
  private readonly candidate = randomBytes(8).toString('hex');
  private lostAt = Number.NEGATIVE_INFINITY;
  /** This process's claims in flight (until their outcome is recorded), to be written again after a loss. */
  private readonly own = new Map<string, { value: string; at: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: FireClaims,
    private readonly claims: FireClaimRepository,
    private readonly outcomes: FireOutcomeRepository,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly diag?: InstantDiagnostics,
  ) {}

  get enabled(): boolean {
    return this.config.claimStore === 'redis';
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.timer = setInterval(() => void this.beat(), LIVENESS_BEAT_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** Every second: claims in flight for longer than a lease forgotten, the epoch read (a loss found without waiting for a claim). */
  async beat(): Promise<void> {
    const now = this.clock.now();
    for (const [fireId, c] of this.own) if (now - c.at > this.config.leaseMs) this.own.delete(fireId);
    try {
      const e = await this.store.epoch(this.candidate);
      this.noteEpoch(e.epoch, e.created, this.clock.now());
    } catch {
      // Redis unreachable: claims go to MySQL meanwhile; the next beat looks again.
    }
  }

  /** Gives back this process's claim of a fire whose call never started (a failure before it); never throws. */
  async giveBack(fireId: string): Promise<void> {
    const own = this.own.get(fireId);
    if (!own) return;
    this.own.delete(fireId);
    await this.store.release(fireId, own.value).catch((e: Error) => this.logger.warn(`giving back the claim of fire ${fireId} failed (it runs out its lease): ${e.message}`));
  }

  /** The attempt's outcome is recorded (or refused): its claim no longer needs writing again after a loss. */
  settled(fireId: string): void {
    this.own.delete(fireId);
  }

  /** How long a claim key lives: past any lease of it (and a takeover's), and past FIRST_CLAIM_FRESH_MS plus the longest early wait. */
  get ttlMs(): number {
    return Math.max(2 * this.config.leaseMs, FIRST_CLAIM_FRESH_MS + this.config.maxEarlyWaitMs) + 60_000;
  }

  /** Whether a first attempt this late after `due` may take a new claim in Redis. */
  fresh(due: number): boolean {
    return this.clock.now() - due <= FIRST_CLAIM_FRESH_MS;
  }

  /** Claims the fire for `token` (null: only looks at its claim); `due` is its run_at plus jitter. */
  claim(fire: { fireId: string }, due: number, token: string | null): Promise<FirstClaim> {
    return new Promise<FirstClaim>((resolve) => {
      const value = token === null ? null : `${token}@${this.clock.now() + this.config.leaseMs}`;
      this.queue.push({ ask: { fireId: fire.fireId, token: value }, due, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.drain());
      }
    });
  }

  /** Moves a held claim to `token` (its holder died or its lease ran out); false when someone else moved it first. */
  async takeOver(fire: { fireId: string }, held: HeldClaim, token: string): Promise<boolean> {
    const value = `${token}@${this.clock.now() + this.config.leaseMs}`;
    try {
      const taken = await this.store.takeOver(fire.fireId, held.value, value, this.ttlMs);
      if (taken) this.own.set(fire.fireId, { value, at: this.clock.now() });
      return taken;
    } catch (e) {
      this.logger.warn(`taking over the claim of fire ${fire.fireId} failed (looked at again later): ${(e as Error).message}`);
      return false;
    }
  }

  /**
   * The outcome of a first attempt claimed here was refused by its row (not pending any more, or gone).
   * A row that is gone (its timer deleted or disabled meanwhile) is filed again under `app` with the
   * outcome, in one INSERT, as a MySQL claim re-creates it. A row settled without an attempt (an edit
   * superseded it, a pause recorded it missed) keeps that record (logged). Otherwise another executor
   * settled or claimed the fire: if this attempt's call went out, the fire was delivered twice without
   * the redelivery flag (Redis lost the claim), which is counted (`timer_duplicate_deliveries_detected_total`) and logged.
   * Returns whether the outcome was written after all.
   */
  async refused(row: FireOutcome, app: string | null, sent: boolean): Promise<boolean> {
    let state = await this.claims.state(row);
    if (state === null && app !== null) {
      if (await this.outcomes.fileOutcome(row, app)) return true;
      state = await this.claims.state(row);
    }
    if (state === null) {
      this.logger.warn(`fire ${fireIdOf(row)} attempt ${row.attempt}: its row is gone and could not be filed again; outcome not recorded`);
      return false;
    }
    if (state.attempt === 0) {
      // Never attempted by anyone: an edit superseded it or a pause recorded it missed while this call went out.
      this.logger.warn(`fire ${fireIdOf(row)}: its row was settled without a delivery (status ${state.status}) while this attempt ${sent ? 'was delivered' : 'ran'}; the row keeps that record`);
      return false;
    }
    if (sent) {
      this.metrics.detectedDuplicates.inc({ reason: 'claim_lost' });
      this.logger.warn(`fire ${fireIdOf(row)} attempt ${row.attempt}: delivered, but another executor had claimed or settled it (its claim in Redis was lost): a second delivery, not flagged; theirs is recorded`);
    }
    return false;
  }

  private drain(): void {
    this.scheduled = false;
    while (this.queue.length > 0) void this.run(this.queue.splice(0, BATCH_MAX));
  }

  private async run(batch: Pending[]): Promise<void> {
    this.diag?.did('claim-batch', batch.length);
    try {
      const result = await this.store.claimMany(
        batch.map((p) => p.ask),
        this.ttlMs,
        this.candidate,
      );
      const now = this.clock.now();
      this.noteEpoch(result.epoch, result.created, now);
      this.metrics.claimBatchSize.observe(batch.length);
      batch.forEach((p, i) => {
        const r = result.replies[i];
        if (r.kind === 'held') p.resolve({ kind: 'held', claim: parseHeld(r.holder) });
        else if (r.kind === 'free' || p.ask.token === null) p.resolve({ kind: 'mysql' });
        else if (this.mayBeLost(p.due, now) && now < this.lostAt + REASSERT_WAIT_MS) p.resolve(this.waitForHolders(p.ask.fireId, p.ask.token));
        else {
          this.own.set(p.ask.fireId, { value: p.ask.token, at: now });
          p.resolve({ kind: 'claimed', lost: this.mayBeLost(p.due, now) });
        }
      });
    } catch (e) {
      this.logger.warn(`claiming ${batch.length} first attempts in Redis failed; they are claimed in MySQL: ${(e as Error).message}`);
      batch.forEach((p) => p.resolve({ kind: 'mysql' }));
    }
  }

  /**
   * A new claim of a fire that may have been claimed before the loss, too soon after it: given back,
   * and the fire looked at again once every live holder wrote its claims in flight again.
   */
  private waitForHolders(fireId: string, value: string): FirstClaim {
    this.store.release(fireId, value).catch((e: Error) => this.logger.warn(`giving back the claim of fire ${fireId} failed (it expires): ${e.message}`));
    return { kind: 'wait', until: this.lostAt + REASSERT_WAIT_MS };
  }

  /** Notes the epoch Redis holds; a missing or replaced one is a loss of the claims: this process's claims in flight are written again. */
  private noteEpoch(epoch: string, created: boolean, now: number): void {
    const lost = this.epoch !== null && (created || epoch !== this.epoch);
    this.epoch = epoch;
    if (!lost) return;
    this.lostAt = now;
    this.logger.warn(
      `Redis lost the fires' claims (the claim epoch was ${created ? 'missing' : 'replaced'}): ${this.own.size} claim(s) in flight written again; ` +
        `first attempts of fires due before ${new Date(now + this.config.maxEarlyWaitMs + LOSS_MARGIN_MS).toISOString()} wait ${REASSERT_WAIT_MS} ms, then are flagged as possible redeliveries`,
    );
    const claims = [...this.own].map(([fireId, c]) => ({ fireId, value: c.value }));
    this.store.reassert(claims, this.ttlMs).then(
      (back) => {
        const taken = claims.filter((_, i) => !back[i]).map((c) => c.fireId);
        if (taken.length > 0) this.logger.warn(`after the loss, ${taken.length} fire(s) in flight here were claimed by another executor meanwhile (their outcomes tell which delivery is recorded): ${taken.slice(0, 10).join(', ')}`);
      },
      (e: Error) => this.logger.warn(`writing ${claims.length} claim(s) in flight again failed: ${e.message}`),
    );
  }

  /** A fire due this soon after a loss may have been claimed before it, within one claim TTL of it. */
  private mayBeLost(due: number, now: number): boolean {
    return now - this.lostAt < this.ttlMs && due <= this.lostAt + this.config.maxEarlyWaitMs + LOSS_MARGIN_MS;
  }
}

/** `<token>@<lease end>`; a value of another shape is held by an unknown token whose lease has ended. */
export function parseHeld(value: string): HeldClaim {
  const cut = value.lastIndexOf('@');
  const until = cut > 0 ? Number(value.slice(cut + 1)) : Number.NaN;
  if (!Number.isSafeInteger(until)) return { value, token: value, until: 0 };
  return { value, token: value.slice(0, cut), until };
}

function fireIdOf(f: FireRef): string {
  return `${f.timerId}-${f.runAt}`;
}
