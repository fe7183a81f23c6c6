/** The furthest ahead a message is handed back (it then comes back, and goes in line again if still over). */
export const HAND_BACK_MAX_MS = 600_000;
/** An app that held a fire within this long still counts as waiting for its share (its next second's fires are on their way). */
export const APP_ACTIVE_LINGER_MS = 5_000;

/**
 * The executor's handlers shared among apps (docs/behaviour.md, "Fair delivery"). A handler holds a
 * task message from its admission to its recorded outcome (the wait for run_at and the callback
 * included), so an app with slow callbacks holds many. Each app may hold at most its share:
 * `handlers / apps active` (an app is active while it holds fires or held one within
 * {@link APP_ACTIVE_LINGER_MS}); an app alone may hold them all (a burst of one app is not slowed),
 * and another app's first message then takes the first handler that frees, after which the first
 * app's share shrinks. A message over its app's share is not taken: the caller hands it back to the
 * broker for later, so messages keep flowing for the other apps. Memory: one small entry per active app.
 */
export class AppFairShare {
  private readonly apps = new Map<string, AppEntry>();
  private prunedAt = 0;

  constructor(private readonly handlers: number) {}

  /** Fires `app` holds now. */
  held(app: string): number {
    return this.apps.get(app)?.held ?? 0;
  }

  /** Apps holding fires or recently seen, after dropping those gone quiet. */
  active(now: number): number {
    // At most every 100 ms: a walk over the apps per message would cost O(apps) each.
    if (now - this.prunedAt >= 100 || now < this.prunedAt) {
      this.prunedAt = now;
      for (const [app, e] of this.apps) if (e.held === 0 && now - e.lastSeen > APP_ACTIVE_LINGER_MS) this.apps.delete(app);
    }
    return this.apps.size;
  }

  /** The most `app` may hold now. */
  shareOf(app: string, now: number): number {
    const others = this.othersActive(app, now);
    if (others === 0) return this.handlers;
    return Math.max(1, Math.floor(this.handlers / (others + 1)));
  }

  /**
   * Whether `app` holds more than half its share: its fires due at an instant start after the other
   * apps' fires due at the same instant (FireDelivery): run in the same event-loop turn, a slow app's
   * hundreds of fires of one second put their pre-call work ahead of every other app's call
   * (docs/benchmarks.md, "Measurements behind the code").
   */
  heavy(app: string, now: number): boolean {
    return this.held(app) * 2 > this.shareOf(app, now);
  }

  /**
   * Whether a fire of `app` asking now would be handed back: it holds its share while another app is
   * active. Alone, an app is limited by the lanes only: its fires across lanes may outnumber one lane's
   * handlers, and handing them back would only make them late, with nobody to make room for.
   */
  over(app: string, now: number): boolean {
    const e = this.apps.get(app);
    if (!e || this.othersActive(app, now) === 0) return false;
    return e.held >= this.shareOf(app, now);
  }

  private othersActive(app: string, now: number): number {
    return this.active(now) - (this.apps.has(app) ? 1 : 0);
  }

  /** Takes a handler for `app` when it is under its share (or `force`); false: hand the message back. */
  tryHold(app: string, now: number, force = false): boolean {
    const refused = !force && this.over(app, now);
    const e = this.apps.get(app) ?? { held: 0, lastSeen: now, avgHoldMs: 0, nextSlotAt: 0, busySince: now };
    e.lastSeen = now;
    this.apps.set(app, e);
    if (refused) return false;
    if (e.held === 0) e.busySince = now;
    e.held++;
    return true;
  }

  /** Gives back a handler taken at `heldSince` (its hold time feeds the app's pace). */
  release(app: string, now: number, heldSince?: number): void {
    const e = this.apps.get(app);
    if (!e) return;
    e.held = Math.max(0, e.held - 1);
    e.lastSeen = now;
    if (heldSince !== undefined) {
      const d = Math.max(0, now - heldSince);
      e.avgHoldMs = e.avgHoldMs === 0 ? d : 0.9 * e.avgHoldMs + 0.1 * d;
    }
  }

  /**
   * When a message of `app` handed back now should come back: not before `floorMs`, and in line behind
   * the app's earlier hand-backs at the pace its share frees (share / average hold), so that an app far
   * over its share sees each excess message come back about once, when there may be room, instead of
   * every few seconds (each hand-back costs a publish); at most {@link HAND_BACK_MAX_MS} ahead.
   */
  handBackAt(app: string, now: number, floorMs: number): number {
    const e = this.apps.get(app);
    const earliest = now + floorMs;
    if (!e) return earliest;
    const at = Math.min(Math.max(earliest, e.nextSlotAt), now + HAND_BACK_MAX_MS);
    // Before the first hold ended, its age is what is known of the hold time (a slow app's first seconds).
    const holdMs = e.avgHoldMs > 0 ? e.avgHoldMs : now - e.busySince;
    e.nextSlotAt = at + holdMs / Math.max(1, this.shareOf(app, now));
    return Math.round(at);
  }
}

interface AppEntry {
  held: number;
  lastSeen: number;
  /** Moving average of how long the app's messages hold a handler. */
  avgHoldMs: number;
  /** Where the app's next hand-back goes in line. */
  nextSlotAt: number;
  /** Since when it has held fires without a pause. */
  busySince: number;
}
