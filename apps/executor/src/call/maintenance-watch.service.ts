import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { MAINTENANCE_REFRESH_MS, MaintenanceWindows } from '@timer/redis';
import { coveringWindow, MaintenanceWindow, WindowHit, windowLasts } from '@timer/schedule';

/**
 * The maintenance windows as this executor knows them (docs/behaviour.md, "Maintenance windows"):
 * re-read from Redis ({@link MaintenanceWindows}) every {@link MAINTENANCE_REFRESH_MS}. When Redis
 * cannot be read the last known windows stay in force.
 */
@Injectable()
export class MaintenanceWatch implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MaintenanceWatch.name);
  private windows = new Map<string, MaintenanceWindow[]>();
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(
    private readonly store: MaintenanceWindows,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), MAINTENANCE_REFRESH_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** True when some app has a window: only then is a fire's app looked up. */
  get any(): boolean {
    return this.windows.size > 0;
  }

  /** The window occurrence a fire of the app's timer at `runAt` falls in, if any. */
  covering(app: string, timerId: string, runAt: number): WindowHit | null {
    const ws = this.windows.get(app);
    return ws ? coveringWindow(ws, timerId, runAt) : null;
  }

  async refresh(): Promise<void> {
    try {
      const all = await this.store.read();
      // A fixed window that ended an hour ago covers no fire that still arrives.
      const cutoff = this.clock.now() - 3_600_000;
      const kept = new Map<string, MaintenanceWindow[]>();
      for (const [app, ws] of all) {
        const lasting = ws.filter((w) => windowLasts(w, cutoff));
        if (lasting.length > 0) kept.set(app, lasting);
      }
      this.windows = kept;
      if (this.failing) this.logger.log('maintenance windows readable again');
      this.failing = false;
    } catch (e) {
      if (!this.failing) this.logger.warn(`reading the maintenance windows failed; the last known ones stay in force: ${(e as Error).message}`);
      this.failing = true;
    }
  }
}
