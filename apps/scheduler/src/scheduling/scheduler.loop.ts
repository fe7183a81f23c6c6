import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { TickLoop } from '@timer/platform';
import { SchedulerConfig } from '../config/scheduler.env';
import { SchedulerService } from './scheduler.service';

/** Runs the scheduler every TIMER_SCHEDULER_TICK_MS, one tick at a time. */
@Injectable()
export class SchedulerLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SchedulerLoop.name);
  private readonly loop: TickLoop;

  constructor(scheduler: SchedulerService, config: SchedulerConfig) {
    this.loop = new TickLoop(config.tickMs, async () => void (await scheduler.tick()), this.logger);
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  /** Before Redis and the Pulsar client close: stop ticking and let the tick in progress finish. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
