import { Controller, Logger } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { MigrateRangeMessage, TOPICS } from '@timer/contracts';
import { MigratorService } from './migrator.service';

/** Range messages of split windows: acked once the range is done, nacked (redelivered) on failure. */
@Controller()
export class RangeHandler {
  private readonly logger = new Logger(RangeHandler.name);

  constructor(private readonly migrator: MigratorService) {}

  @EventPattern(TOPICS.migrateRanges)
  async onRange(@Payload() data: unknown): Promise<void> {
    const range = parseRange(data);
    if (!range) {
      this.logger.error(`dropping a message that is not a MigrateRangeMessage: ${JSON.stringify(data)?.slice(0, 300)}`);
      return;
    }
    await this.migrator.migrateRange(range);
  }
}

/** The message, or null when it is malformed (acked and logged: redelivery would not help). */
export function parseRange(raw: unknown): MigrateRangeMessage | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const m = raw as Record<string, unknown>;
  const isMs = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!isMs(m.windowStart) || !isMs(m.windowEnd) || m.windowEnd <= m.windowStart) return null;
  if (typeof m.fromTimerId !== 'string' || !/^\d{1,20}$/.test(m.fromTimerId)) return null;
  if (typeof m.toTimerId !== 'string' || !/^(\d{1,20})?$/.test(m.toTimerId)) return null;
  if (m.toTimerId !== '' && BigInt(m.toTimerId) <= BigInt(m.fromTimerId)) return null;
  return { windowStart: m.windowStart, windowEnd: m.windowEnd, fromTimerId: m.fromTimerId, toTimerId: m.toTimerId };
}
