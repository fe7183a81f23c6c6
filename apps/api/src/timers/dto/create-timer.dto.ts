import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsDefined, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateBy, ValidateNested } from 'class-validator';
import { APP_NAME, IsAppName } from '../../common/validators';
import { NotifyHttpParamDto } from './notify-http-param.dto';
import { RetryPolicyDto } from './retry-policy.dto';

export const MISFIRE_POLICIES = ['fire_late', 'skip'] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];

/** Latest instant accepted for `runAt` (9999-12-31T23:59:59.999Z). */
const MAX_EPOCH_MS = 253_402_300_799_999;
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** `runAt` as epoch ms: a JSON integer, a digit string, or an ISO 8601 date-time with `Z` or an offset. */
export function parseRunAt({ value }: { value: unknown }): unknown {
  if (typeof value === 'string') {
    if (/^\d{1,16}$/.test(value)) return Number(value);
    if (ISO_WITH_ZONE.test(value)) {
      const ms = Date.parse(value);
      return Number.isNaN(ms) ? value : ms;
    }
  }
  return value;
}

export const isEpochMs = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_EPOCH_MS;

/** `POST /api/timer/v1/def`: the seed's fields (app, name, cron, notifyHTTPParam) plus the extensions. */
export class CreateTimerDto {
  @ApiProperty({ description: 'Application the timer belongs to.', example: 'billing', pattern: APP_NAME.source })
  @IsAppName()
  app!: string;

  @ApiProperty({ description: 'Unique among the live timers of the app (reusable once deleted).', example: 'daily-report', maxLength: 255 })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  @Matches(/^[^\x00-\x1f\x7f]*$/, { message: 'name must not contain control characters' })
  name!: string;

  @ApiPropertyOptional({
    description:
      'Cron expression: 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first. Evaluated in ' +
      '`timeZone`. Required unless `runAt` is given; not both.',
    example: '0 */5 * * * *',
    maxLength: 255,
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  cron?: string;

  @ApiPropertyOptional({
    description: 'Extension: one-shot fire time instead of `cron`, epoch ms or ISO 8601 with `Z`/offset. Must be in the future.',
    oneOf: [{ type: 'integer', example: 1767225600000 }, { type: 'string', format: 'date-time', example: '2026-01-01T00:00:00Z' }],
  })
  @IsOptional()
  @Transform(parseRunAt)
  @ValidateBy({
    name: 'isRunAt',
    validator: { validate: isEpochMs, defaultMessage: () => 'runAt must be epoch milliseconds or an ISO 8601 date-time with Z or an offset' },
  })
  runAt?: number;

  @ApiPropertyOptional({ description: 'Extension: IANA time zone the cron is evaluated in.', default: 'UTC', example: 'Europe/Berlin', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timeZone?: string;

  @ApiProperty({ type: NotifyHttpParamDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => NotifyHttpParamDto)
  notifyHTTPParam!: NotifyHttpParamDto;

  @ApiPropertyOptional({ type: RetryPolicyDto, description: 'Extension: retries of a failed callback.' })
  @IsOptional()
  @ValidateNested()
  @Type(() => RetryPolicyDto)
  retryPolicy?: RetryPolicyDto;

  @ApiPropertyOptional({
    enum: MISFIRE_POLICIES,
    default: 'fire_late',
    description: 'Extension: a fire found late (after downtime) is delivered late (`fire_late`) or recorded as missed (`skip`).',
  })
  @IsOptional()
  @IsIn(MISFIRE_POLICIES)
  misfirePolicy?: MisfirePolicy;
}
