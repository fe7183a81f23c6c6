import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsDefined, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateBy, ValidateNested } from 'class-validator';
import { APP_NAME, IsAppName, ISO_INSTANT, parseIsoInstant } from '../../common/validators';
import { NotifyHttpParamDto } from './notify-http-param.dto';
import { RetryPolicyDto } from './retry-policy.dto';

export const MISFIRE_POLICIES = ['fire_late', 'skip'] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];

/** Latest instant accepted for `runAt` (9999-12-31T23:59:59.999Z). */
export const MAX_EPOCH_MS = 253_402_300_799_999;

/**
 * `runAt` as epoch ms: a JSON integer, a digit string, or an ISO 8601 date-time with `Z` or an offset
 * naming a real instant (an impossible one, `02-30` or `T24:00`, stays a string and is refused).
 */
export function parseRunAt({ value }: { value: unknown }): unknown {
  if (typeof value === 'string') {
    if (/^\d{1,16}$/.test(value)) return Number(value);
    const iso = parseIsoInstant(value);
    if (iso && 'ms' in iso) return iso.ms;
  }
  return value;
}

/** The validation message for a refused `runAt`, naming the impossible field when there is one. */
export function runAtMessage(value: unknown): string {
  const iso = typeof value === 'string' ? parseIsoInstant(value) : undefined;
  if (iso && 'problem' in iso) return `runAt ${JSON.stringify(value)} is not a real date-time: ${iso.problem}`;
  return 'runAt must be epoch milliseconds or an ISO 8601 date-time with Z or an offset';
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
    oneOf: [
      { type: 'integer', minimum: 0, maximum: MAX_EPOCH_MS, example: 1767225600000 },
      { type: 'string', format: 'date-time', pattern: ISO_INSTANT.source, example: '2026-01-01T00:00:00Z' },
    ],
  })
  @IsOptional()
  @Transform(parseRunAt)
  @ValidateBy({
    name: 'isRunAt',
    validator: { validate: isEpochMs, defaultMessage: (args) => runAtMessage(args?.value) },
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
