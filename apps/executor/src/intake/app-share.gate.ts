import { Inject, Injectable, Logger } from '@nestjs/common';
import { MESSAGE_PROPERTIES, TaskMessage } from '@timer/contracts';
import { Clock, CLOCK } from '@timer/platform';
import { ExecutorConfig } from '../config/executor.env';
import { PauseWatch } from '../shared/pause-watch.service';
import { SettledFires } from '../shared/settled-fires.service';
import { TimerCache } from '../shared/timer-cache.service';
import { DeliveryControl } from '../delivery-control/delivery-control.service';
import { DeliveryControlMetrics } from '../delivery-control/delivery-control.metrics';

/** A message handed back this many times is taken over its app's share (about an hour of deferrals: nothing waits for ever). */
export const MAX_SHARE_DEFERRALS = 120;
/** The hand-backs (counted before this one) at which an over-share message's fire is looked up, settled or not. */
const SETTLED_CHECK_AT = new Set([2, 8, 32]);
/** The n-th hand-back waits 1 s * 2^n, at most this (+-20 %): an app far over its share is not re-read every second. */
export const SHARE_DEFERRAL_MAX_MS = 30_000;

/**
 * Taken (give it back with `leave`), or not: the message is to be handed back to the broker, for `at`,
 * as its `deferrals`-th hand-back (the caller publishes it).
 */
export type ShareEntry = { entered: true; leave: () => void } | { entered: false; at: number; deferrals: number };

/** Properties of messages that are never handed back (see `enter`). */
const ASKED_FOR = [MESSAGE_PROPERTIES.recheck, MESSAGE_PROPERTIES.runNow, MESSAGE_PROPERTIES.replayedFrom];

const NOTHING_HELD: ShareEntry = { entered: true, leave: () => undefined };

/** The delay of the n-th hand-back (0-based). */
export function shareDeferralMs(n: number, random: () => number = Math.random): number {
  return Math.round(Math.min(SHARE_DEFERRAL_MAX_MS, 1_000 * 2 ** Math.min(n, 15)) * (0.8 + 0.4 * random()));
}

/**
 * Fair delivery's door (docs/behaviour.md, "Fair delivery"): a task message takes one of its app's
 * share of the handlers before it is admitted and gives it back once its outcome is written. Over the
 * share, it is handed back to the broker before the claim (no write, no attempt used), to come back
 * later on the retries topic with `x-timer-deferrals` counting the hand-backs; the misfire policy still
 * judges it when it is finally taken.
 */
@Injectable()
export class AppShareGate {
  private readonly logger = new Logger(AppShareGate.name);

  constructor(
    private readonly control: DeliveryControl,
    private readonly cache: TimerCache,
    private readonly config: ExecutorConfig,
    private readonly metrics: DeliveryControlMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly settled: SettledFires,
    private readonly pauses: PauseWatch,
  ) {}

  /** The fire's app when its timer's definition is cached (no lookup): what the executor's waits group fires by. */
  appOf(msg: TaskMessage): string | undefined {
    return this.cache.peek(msg.timerId)?.timer.app;
  }

  /**
   * Whether `msg` would be handed back were it to ask for its share now: its app holds its share while
   * another app is active, and the message is neither asked for nor handed back too often already.
   * No look-up: false when the timer's definition is not cached.
   */
  wouldHandBack(msg: TaskMessage, properties: Record<string, string>): boolean {
    const def = this.cache.peek(msg.timerId);
    if (!def || beyondShare(properties)) return false;
    return this.control.shares.over(def.timer.app, this.clock.now());
  }

  /**
   * The share taken, or the message being handed back. Synchronous (no promise) in the common case,
   * the timer's definition cached and the app under its share: this runs once per fire.
   */
  enter(msg: TaskMessage, properties: Record<string, string>): ShareEntry | Promise<ShareEntry> {
    // Far-ahead messages are handed back by the admission anyway; asked-for ones (run now, replays)
    // and rechecks of claimed fires carry state a hand-back would drop: they count, never wait.
    if (msg.runAt - this.clock.now() > this.config.maxEarlyWaitMs) return NOTHING_HELD;
    const def = this.cache.peek(msg.timerId);
    if (def === undefined) return this.cache.get(msg.timerId).then((loaded) => (loaded ? this.enterApp(msg, properties, loaded.timer.app) : NOTHING_HELD));
    return def ? this.enterApp(msg, properties, def.timer.app) : NOTHING_HELD;
  }

  private enterApp(msg: TaskMessage, properties: Record<string, string>, app: string): ShareEntry | Promise<ShareEntry> {
    const deferrals = deferralsOf(properties);
    const now = this.clock.now();
    if (this.control.shares.tryHold(app, now, beyondShare(properties, deferrals))) {
      return { entered: true, leave: () => this.control.shares.release(app, this.clock.now(), now) };
    }
    return this.overShare(msg, properties, app, deferrals, now);
  }

  private async overShare(msg: TaskMessage, properties: Record<string, string>, app: string, deferrals: number, now: number): Promise<ShareEntry> {
    // Over the share: a message the admission would drop anyway (settled fire, paused app) goes on to
    // it without a handler of the share, rather than being handed back again and again.
    if (await this.shouldDrop(msg, properties, app, deferrals)) return NOTHING_HELD;
    const at = this.control.shares.handBackAt(app, now, shareDeferralMs(deferrals));
    this.metrics.deferred.inc({ reason: 'app_share' });
    this.logger.debug(`fire ${msg.fireId}: app ${app} holds its share (${this.control.shares.held(app)}); back at ${at}`);
    return { entered: false, at, deferrals: deferrals + 1 };
  }

  /**
   * Whether FireAdmission will ack this message without a delivery: it is a scheduled first attempt of
   * an app in its pause (the in-memory pause set; no lookup while no app is paused), or its fire is
   * settled. The fire's row is read only at the hand-backs in {@link SETTLED_CHECK_AT}: a duplicate of
   * a settled fire (rare: redeliveries) is dropped within a few hand-backs, and an ordinary fire of an
   * app over its share costs no read on its first hand-backs. With the bloom filter (`SettledFires`),
   * the filter is asked first there, and the row read only when it may have seen the fire. `app` is
   * the timer's app when the caller has it.
   */
  async shouldDrop(msg: TaskMessage, properties: Record<string, string>, app?: string, deferrals = deferralsOf(properties)): Promise<boolean> {
    const asked = ASKED_FOR.some((p) => properties[p] !== undefined);
    if (this.pauses.any && !asked && !msg.backfill && msg.attempt === 1) {
      const owner = app ?? (await this.cache.get(msg.timerId))?.timer.app;
      if (owner !== undefined && this.pauses.verdict(owner, msg.runAt) === 'skip') return true;
    }
    if (!SETTLED_CHECK_AT.has(deferrals)) return false;
    // With the bloom filter, a fire it has certainly not seen costs no read.
    return (await this.settled.screen(msg)) !== 'not-settled' && this.settled.isSettled(msg);
  }
}

/** How many times the message was handed back for its app's share already. */
function deferralsOf(properties: Record<string, string>): number {
  return Number(properties[MESSAGE_PROPERTIES.deferrals] ?? 0) || 0;
}

/** Whether the message counts without waiting for its share: asked for (run now, replays) or handed back MAX_SHARE_DEFERRALS times. */
function beyondShare(properties: Record<string, string>, deferrals = deferralsOf(properties)): boolean {
  return deferrals >= MAX_SHARE_DEFERRALS || ASKED_FOR.some((p) => properties[p] !== undefined);
}
