import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { lastValueFrom } from 'rxjs';
import { MigrateRangeMessage, TOPICS } from '@timer/contracts';
import { TimerRepository } from '@timer/dal';
import { ClientPulsar, PulsarRecordBuilder } from '@timer/pulsar-transport';
import { REDIS, RedisKeys } from '@timer/redis';
import { ExpandCounts, MAX_RANGES, RangeCoordination } from './migrator.service';

/** Done markers outlive any window that could still be migrated (catch-up is at most 7 days). */
const DONE_TTL_MS = 8 * 24 * 3_600_000;

/**
 * Splits large windows across replicas: boundaries from the timers table, range messages on
 * `timer-migrate-ranges` (Shared subscription `migrator`: each replica takes one range at a time), and
 * a Redis key per finished range holding its counts.
 */
@Injectable()
export class RangeCoordinator implements RangeCoordination {
  constructor(
    private readonly timers: TimerRepository,
    private readonly client: ClientPulsar,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  boundaries(size: number, beforeMs: number): Promise<string[]> {
    return this.timers.dueBoundaries(beforeMs, size, MAX_RANGES - 1);
  }

  async publish(range: MigrateRangeMessage): Promise<void> {
    const record = new PulsarRecordBuilder(range).setKey(`${range.windowStart}:${range.fromTimerId}`).build();
    await lastValueFrom(this.client.emit(TOPICS.migrateRanges, record), { defaultValue: undefined });
  }

  async done(range: MigrateRangeMessage): Promise<ExpandCounts | null> {
    const raw = await this.redis.get(this.key(range));
    return raw === null ? null : (JSON.parse(raw) as ExpandCounts);
  }

  async markDone(range: MigrateRangeMessage, counts: ExpandCounts): Promise<void> {
    await this.redis.set(this.key(range), JSON.stringify(counts), 'PX', DONE_TTL_MS);
  }

  private key(r: MigrateRangeMessage): string {
    return this.keys.migrateRange(r.windowStart, r.windowEnd, r.fromTimerId, r.toTimerId);
  }
}
