import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { parseSliceMessage } from '@timer/contracts';
import { LifecycleService } from '@timer/platform';
import { SliceWalker } from './slice-walker';
import { TriggerMetrics } from './trigger.metrics';

/**
 * Thrown to the transport when a slice stops for shutdown: the message is nacked and resumed
 * elsewhere. An RpcException, so Nest's handler does not log it as an unexpected error.
 */
export class ShuttingDownError extends RpcException {
  constructor(what: string) {
    super(`shutting down: ${what} stopped at a step boundary; its cursor is saved and it will be redelivered`);
    this.name = 'ShuttingDownError';
  }
}

/** Runs slice walks for the transport and turns their outcome into ack (resolve) or nack (throw). */
@Injectable()
export class SlicesService implements OnModuleDestroy {
  private readonly logger = new Logger(SlicesService.name);
  private stopping = false;

  constructor(
    private readonly walker: SliceWalker,
    private readonly metrics: TriggerMetrics,
    @Inject(LifecycleService) private readonly lifecycle: LifecycleService,
  ) {}

  /** Resolves when the slice is finished or superseded (ack); throws when it stopped or failed (nack). */
  async handle(data: unknown): Promise<void> {
    const parsed = parseSliceMessage(data);
    if (!parsed.ok) {
      this.metrics.slices.inc({ outcome: 'invalid' });
      this.logger.error(`dropping an invalid slice message (${parsed.reason}): ${safeJson(data)}`);
      return;
    }
    const slice = parsed.value;
    const what = `slice ${slice.minute}:${slice.bucket}`;
    if (this.isStopping()) {
      this.metrics.slices.inc({ outcome: 'stopped' });
      throw new ShuttingDownError(what);
    }
    this.metrics.slicesInFlight.inc();
    try {
      const result = await this.walker.walk(slice, () => this.isStopping());
      this.metrics.slices.inc({ outcome: result });
      if (result === 'stopped') throw new ShuttingDownError(what);
    } catch (e) {
      if (!(e instanceof ShuttingDownError)) this.metrics.slices.inc({ outcome: 'failed' });
      throw e;
    } finally {
      this.metrics.slicesInFlight.dec();
    }
  }

  /** Nest's own shutdown (app.close without the role's drain): walks stop at their next step boundary. */
  onModuleDestroy(): void {
    this.stopping = true;
  }

  private isStopping(): boolean {
    // The role's drain (SIGTERM) marks the lifecycle before it closes the transport, which then waits
    // for the in-flight handlers: they see it at their next step boundary.
    return this.stopping || this.lifecycle.draining;
  }
}

function safeJson(data: unknown): string {
  try {
    return JSON.stringify(data)?.slice(0, 300) ?? String(data);
  } catch {
    return String(data);
  }
}
