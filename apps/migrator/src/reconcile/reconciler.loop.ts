import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { TickLoop } from '@timer/platform';
import { MigratorConfig } from '../config/migrator.env';
import { ReconcilerService } from './reconciler.service';

/** Runs a reconciler pass every TIMER_RECONCILER_INTERVAL_MS, one at a time, beside the migrator's own loop. */
@Injectable()
export class ReconcilerLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ReconcilerLoop.name);
  private readonly loop: TickLoop;

  constructor(reconciler: ReconcilerService, config: MigratorConfig) {
    this.loop = new TickLoop(config.reconcileIntervalMs, async () => void (await reconciler.pass()), this.logger);
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
