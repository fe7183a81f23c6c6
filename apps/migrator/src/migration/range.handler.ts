import { Controller, Logger } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { parseMigrateRangeMessage, TOPICS } from '@timer/contracts';
import { MigratorService } from './migrator.service';

/** Range messages of split windows: acked once the range is done, nacked (redelivered) on failure. */
@Controller()
export class RangeHandler {
  private readonly logger = new Logger(RangeHandler.name);

  constructor(private readonly migrator: MigratorService) {}

  @EventPattern(TOPICS.migrateRanges)
  async onRange(@Payload() data: unknown): Promise<void> {
    const parsed = parseMigrateRangeMessage(data);
    if (!parsed.ok) {
      this.logger.error(`dropping an invalid range message (${parsed.reason}): ${JSON.stringify(data)?.slice(0, 300)}`);
      return;
    }
    await this.migrator.migrateRange(parsed.value);
  }
}
