import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { TickLoop } from '@timer/platform';
import { MigratorConfig } from '../config/migrator.env';
import { MigratorService } from './migrator.service';
import { RetentionService } from './retention.service';

/** Runs the migrator (then the hourly retention purge) at start-up and every TIMER_MIGRATOR_TICK_MS, one tick at a time. */
@Injectable()
export class MigratorLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MigratorLoop.name);
  private readonly loop: TickLoop;

  constructor(
    private readonly migrator: MigratorService,
    private readonly retention: RetentionService,
    config: MigratorConfig,
  ) {
    this.loop = new TickLoop(
      config.tickMs,
      async () => {
        await this.migrator.tick();
        await this.retention.purgeIfDue();
      },
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  /** Before Redis and MySQL close: stop at the next page, release the window lock, wait for it. */
  async beforeApplicationShutdown(): Promise<void> {
    this.migrator.stop();
    await this.loop.stop();
  }
}
