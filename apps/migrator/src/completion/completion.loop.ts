import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { TickLoop } from '@timer/platform';
import { COMPLETION_SWEEP_MS, CompletionService } from './completion.service';

/** Runs the completion sweep every COMPLETION_SWEEP_MS, one at a time, beside the migrator's own loop. */
@Injectable()
export class CompletionLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CompletionLoop.name);
  private readonly loop: TickLoop;

  constructor(completion: CompletionService) {
    this.loop = new TickLoop(COMPLETION_SWEEP_MS, async () => void (await completion.sweep()), this.logger);
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
