import { Logger } from '@nestjs/common';

/**
 * Runs `tick` at start and then every `periodMs`, never two at once: the next tick is scheduled only
 * after the previous one settled (a slow tick delays the next instead of overlapping it). A tick's
 * error is logged and does not stop the loop.
 */
export class TickLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly periodMs: number,
    private readonly tick: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops scheduling and waits for the tick in progress, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.run(), delayMs);
  }

  private async run(): Promise<void> {
    this.timer = undefined;
    const started = Date.now();
    this.running = this.tick().catch((e: unknown) => this.logger.error(`tick failed: ${e instanceof Error ? e.stack : String(e)}`));
    await this.running;
    this.running = undefined;
    this.schedule(Math.max(0, this.periodMs - (Date.now() - started)));
  }
}
