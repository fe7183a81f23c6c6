import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { hostname } from 'os';
import { CLOCK, NowClock } from '@timer/platform';
import { REDIS, REDIS_KEY_PREFIX, TRIGGER_SLOTS_FRESH_MS, TriggerSlots } from '@timer/redis';
import { TriggerConfig } from '../config/trigger.env';

/** How often the trigger reports its slots: three reports within the migrator's freshness. */
export const SLOTS_REPORT_MS = TRIGGER_SLOTS_FRESH_MS / 3;

/**
 * Reports how many slices this trigger walks at once (`TIMER_TRIGGER_CONCURRENCY`) to Redis
 * (`TriggerSlots`), from boot until shutdown: the migrator gives a minute more buckets only while the
 * live triggers have the slots to walk them (docs/scaling.md, "Buckets per minute").
 */
@Injectable()
export class SlotsReport implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SlotsReport.name);
  private readonly processId = `${hostname().slice(0, 60)}:${process.pid}`;
  private readonly slots: TriggerSlots;
  private timer: NodeJS.Timeout | undefined;
  private warned = false;

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(REDIS_KEY_PREFIX) prefix: string,
    private readonly config: TriggerConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {
    this.slots = new TriggerSlots(redis, prefix);
  }

  onApplicationBootstrap(): void {
    void this.report();
    this.timer = setInterval(() => void this.report(), SLOTS_REPORT_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.slots.remove(this.processId).catch(() => undefined);
  }

  private async report(): Promise<void> {
    try {
      await this.slots.report(this.processId, this.config.concurrency, this.clock.now());
      this.warned = false;
    } catch (e) {
      // Without fresh reports the migrator keeps minutes at the default count: nothing is at risk, say it once.
      if (!this.warned) this.logger.warn(`slots report failed: ${(e as Error).message}`);
      this.warned = true;
    }
  }
}
