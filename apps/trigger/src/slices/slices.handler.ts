import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { TOPICS } from '@timer/contracts';
import { SlicesService } from './slices.service';

/**
 * `timer-slices` (subscription `trigger`, Shared). The promise settles when the slice is finished or
 * superseded (the transport acks) or stopped / failed (it nacks, so the slice is redelivered).
 */
@Controller()
export class SlicesHandler {
  constructor(private readonly slices: SlicesService) {}

  @EventPattern(TOPICS.slices)
  onSlice(@Payload() data: unknown): Promise<void> {
    return this.slices.handle(data);
  }
}
