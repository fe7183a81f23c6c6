/** An app that held a fire within this long still counts as waiting for its share (its next second's fires are on their way). */
export const APP_ACTIVE_LINGER_MS = 5_000;

/**
 * The executor's handlers shared among apps (docs/pipeline.md, "Fair delivery"). A handler holds a
 * task message from its admission to its recorded outcome (the wait for run_at and the callback
 * included), so an app with slow callbacks holds many. Each app may hold at most its share:
 * `handlers / apps active` (an app is active while it holds fires or held one within
 * {@link APP_ACTIVE_LINGER_MS}); an app alone may hold them all (a burst of one app is not slowed),
 * and another app's first message then takes the first handler that frees, after which the first
 * app's share shrinks. A message over its app's share is not taken: the caller hands it back to the
 * broker for later, so messages keep flowing for the other apps. Memory: one small entry per active app.
 */
export class AppFairShare {
  private readonly apps = new Map<string, { held: number; lastSeen: number }>();
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
    const others = this.active(now) - (this.apps.has(app) ? 1 : 0);
    if (others === 0) return this.handlers;
    return Math.max(1, Math.floor(this.handlers / (others + 1)));
  }

  /** Takes a handler for `app` when it is under its share (or `force`); false: hand the message back. */
  tryHold(app: string, now: number, force = false): boolean {
    const share = this.shareOf(app, now);
    const e = this.apps.get(app) ?? { held: 0, lastSeen: now };
    e.lastSeen = now;
    this.apps.set(app, e);
    if (!force && e.held >= share) return false;
    e.held++;
    return true;
  }

  release(app: string, now: number): void {
    const e = this.apps.get(app);
    if (!e) return;
    e.held = Math.max(0, e.held - 1);
    e.lastSeen = now;
  }
}
