import { Inject, Injectable, Logger } from '@nestjs/common';
import { IDEMPOTENCY_KEY_TTL_MS, IdempotencyKeyRepository, TaskRepository } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { MigratorConfig } from '../config/migrator.env';

export type TaskPurger = Pick<TaskRepository, 'purgeOlderThan'>;
export type KeyPurger = Pick<IdempotencyKeyRepository, 'purgeOlderThan'>;

/** Rows one DELETE removes: short statements, no long lock on a large range. */
export const PURGE_BATCH = 5_000;
/**
 * Most DELETEs one tick runs: the purge shares the migrator's loop and must not hold up expansion,
 * yet must remove rows faster than a high fire rate finishes them (docs/scaling.md, "Partitioning:
 * the `tasks` table at a billion rows").
 */
export const PURGE_MAX_BATCHES = 100;
/** Retention runs at most this often (the migrator ticks every minute), unless a backlog is left. */
export const PURGE_EVERY_MS = 3_600_000;

/**
 * Deletes finished fire records (succeeded, failed, missed) older than TIMER_TASK_RETENTION_DAYS, and
 * the api's idempotency keys older than their 24 h, in batches, from the migrator's loop: hourly, or at
 * every tick while a backlog is left (a first purge of a large table goes on tick by tick). Pending
 * and running rows are never deleted. Replicas may run it at the same time: each DELETE is
 * independent and idempotent.
 */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger(RetentionService.name);
  private lastRunAt = -Infinity;

  constructor(
    @Inject(TaskRepository) private readonly tasks: TaskPurger,
    @Inject(IdempotencyKeyRepository) private readonly keys: KeyPurger,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly config: MigratorConfig,
  ) {}

  /** Purges when due; returns the fire records deleted (0 when not due or retention is off). Never throws. */
  async purgeIfDue(): Promise<number> {
    const now = this.clock.now();
    if (now - this.lastRunAt < PURGE_EVERY_MS) return 0;
    this.lastRunAt = now;
    await this.purge('idempotency keys older than 24 h', () => this.keys.purgeOlderThan(now - IDEMPOTENCY_KEY_TTL_MS, PURGE_BATCH, PURGE_MAX_BATCHES));
    const days = this.config.retentionDays;
    if (days <= 0) return 0;
    return this.purge(`fire records older than ${days} days`, () => this.tasks.purgeOlderThan(now - days * 86_400_000, PURGE_BATCH, PURGE_MAX_BATCHES));
  }

  /** One purge; a full last batch leaves the next tick to go on. Failures are logged (retried next hour). */
  private async purge(what: string, run: () => Promise<number>): Promise<number> {
    try {
      const deleted = await run();
      const more = deleted >= PURGE_BATCH * PURGE_MAX_BATCHES;
      if (more) this.lastRunAt = -Infinity;
      if (deleted > 0) this.logger.log(`retention: deleted ${deleted} ${what}${more ? '; more next tick' : ''}`);
      return deleted;
    } catch (e) {
      this.logger.warn(`retention: purging ${what} failed (retried next hour): ${(e as Error).message}`);
      return 0;
    }
  }
}
