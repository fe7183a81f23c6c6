import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { OptionalEpochMs } from '../../accounting/dto/accounting.query';
import { AppNameDto } from '../../apps/dto/app.dto';
import { Envelope } from '../../common/envelope';
import { IsAppName } from '../../common/validators';

/** An optional quota field: an integer in [0, max], 0 = no limit, null or left out = the configured default. */
function QuotaField(field: string, max: number, description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 0, maximum: max, description: `${description} 0 = no limit; null or left out = the default (TIMER_QUOTA_*).` }),
    IsOptional(),
    IsInt({ message: `${field} must be an integer (or null for the default)` }),
    Min(0, { message: `${field} must be >= 0 (0 = no limit)` }),
    Max(max, { message: `${field} must be <= ${max}` }),
  );
}

/** `PUT /api/app/v1/quota`: replaces the app's quotas (each field left out or null is the default). */
export class PutQuotaDto extends AppNameDto {
  @QuotaField('maxTimers', 100_000_000, 'Live timers of the app (a create past it: 403).')
  maxTimers?: number | null;

  @QuotaField('maxFiresPerMinute', 1_000_000_000, 'The app\'s projected fires in its busiest coming minute, counting the timer written (past it: 429).')
  maxFiresPerMinute?: number | null;

  @QuotaField('minIntervalMs', 86_400_000, 'Smallest gap between two fires of one timer\'s schedule, ms (below it: 403).')
  minIntervalMs?: number | null;
}

/** `GET /api/app/v1/quota?app=`. */
export class QuotaQuery extends AppNameDto {}

/** `GET /api/app/v1/load?from=&to=`. */
export class LoadQuery {
  @ApiPropertyOptional({ example: 'billing', description: 'Admin only: one app\'s load instead of all apps\'. An app token always sees its own app.' })
  @IsOptional()
  @IsAppName()
  app?: string;

  @OptionalEpochMs('from', 'Epoch ms; default: now. Rounded down to a whole second.')
  from?: number;

  @OptionalEpochMs('to', 'Epoch ms, exclusive; default: from + 60 s. Rounded up to a whole second; at most 3600 s after from.')
  to?: number;
}

export class QuotaValues {
  @ApiProperty({ example: 100000, description: 'Live timers; 0 = no limit.' })
  maxTimers!: number;
  @ApiProperty({ example: 120000, description: 'Projected fires in the app\'s busiest coming minute; 0 = no limit.' })
  maxFiresPerMinute!: number;
  @ApiProperty({ example: 1000, description: 'Smallest gap between two fires of a schedule (ms); 0 = no limit.' })
  minIntervalMs!: number;
}

export class StoredQuotaView {
  @ApiProperty({ type: Number, nullable: true })
  maxTimers!: number | null;
  @ApiProperty({ type: Number, nullable: true })
  maxFiresPerMinute!: number | null;
  @ApiProperty({ type: Number, nullable: true })
  minIntervalMs!: number | null;
}

export class QuotaUsage {
  @ApiProperty({ description: 'Live timers of the app (enabled or not).' })
  timers!: number;
  @ApiProperty({ description: 'Pending fires in the app\'s busiest coming minute (of the prepared windows).' })
  firesPerMinute!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Start of that minute (epoch ms); null when nothing is pending.' })
  busiestMinute!: number | null;
  @ApiProperty({ description: 'End of the prepared windows (epoch ms): the projection looks this far.' })
  until!: number;
}

export class QuotaView {
  @ApiProperty({ example: 'billing' })
  app!: string;
  @ApiProperty({ type: QuotaValues, description: 'The quotas in force (the app\'s own, else the defaults).' })
  quota!: QuotaValues;
  @ApiProperty({ type: StoredQuotaView, description: 'What PUT set for the app; null = the default.' })
  set!: StoredQuotaView;
  @ApiProperty({ type: QuotaUsage })
  usage!: QuotaUsage;
}

export class QuotaResponse extends Envelope {
  @ApiProperty({ type: QuotaView })
  data!: QuotaView;
}

export class LoadPeak {
  @ApiProperty({ description: 'Second (epoch ms).' })
  at!: number;
  @ApiProperty()
  fires!: number;
}

export class LoadView {
  @ApiProperty({ type: String, nullable: true, description: 'The app, or null for all apps (admin).' })
  app!: string | null;
  @ApiProperty({ description: 'First second (epoch ms).' })
  from!: number;
  @ApiProperty({ description: 'End (epoch ms, exclusive).' })
  to!: number;
  @ApiProperty({ description: 'TIMER_CAPACITY_FIRES_PER_SEC (0 = no admission control).' })
  capacityPerSec!: number;
  @ApiProperty({ type: LoadPeak, nullable: true, description: 'The busiest second of the range; null when nothing is pending.' })
  peak!: LoadPeak | null;
  @ApiProperty({ type: [Number], description: 'Pending fires of each second of [from, to), in order.' })
  perSecond!: number[];
}

export class LoadResponse extends Envelope {
  @ApiProperty({ type: LoadView })
  data!: LoadView;
}
