import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock, CLOCK, MetricsService } from '@timer/platform';
import { inPause, PAUSED_APPS_REFRESH_MS, PausedApps, PauseState, RESUME_MARGIN_MS } from '@timer/redis';
import { Counter } from 'prom-client';

/** A pause that ended longer ago than this no longer matters to messages arriving now. */
const ENDED_PAUSE_KEPT_MS = 5 * 60_000;

/** What to do with a fire of a paused app. */
export type PauseVerdict = 'deliver' | 'skip' | 'later';

/**
 * The paused apps as this executor knows them (docs/behaviour.md, "Pause"): re-read from Redis
 * ({@link PausedApps}) every {@link PAUSED_APPS_REFRESH_MS}. When Redis cannot be read the last known
 * set stays in force: a fire skipped by mistake stays pending and the reconciler re-publishes it, a
 * fire delivered by mistake was due anyway.
 */
@Injectable()
export class PauseWatch implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PauseWatch.name);
  private pauses = new Map<string, PauseState>();
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  readonly skipped: Counter;

  constructor(
    private readonly paused: PausedApps,
    metrics: MetricsService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.skipped = new Counter({
      name: 'timer_paused_fires_skipped_total',
      help: 'Task messages of a paused app acked without a callback or a write (the reconciler records them missed, reason paused)',
      registers: [metrics.registry],
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), PAUSED_APPS_REFRESH_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** True when some app is paused (or resumed moments ago): only then is a fire's app looked up. */
  get any(): boolean {
    return this.pauses.size > 0;
  }

  /**
   * `skip` for a fire in its app's pause; `later` when the pause lasts but the fire is further ahead
   * than a resume could still reach (hand it back to the broker and decide near its time); else `deliver`.
   */
  verdict(app: string, runAt: number): PauseVerdict {
    const state = this.pauses.get(app);
    if (!inPause(state, runAt)) return 'deliver';
    if (state?.resumedAt === null && runAt - this.clock.now() > RESUME_MARGIN_MS - PAUSED_APPS_REFRESH_MS) return 'later';
    return 'skip';
  }

  async refresh(): Promise<void> {
    try {
      const all = await this.paused.read();
      const cutoff = this.clock.now() - ENDED_PAUSE_KEPT_MS;
      this.pauses = new Map([...all].filter(([, s]) => s.resumedAt === null || s.resumedAt > cutoff));
      if (this.failing) this.logger.log('paused apps readable again');
      this.failing = false;
    } catch (e) {
      if (!this.failing) this.logger.warn(`reading the paused apps failed; the last known ones stay in force: ${(e as Error).message}`);
      this.failing = true;
    }
  }
}
