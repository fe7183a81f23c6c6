import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, MaxLength, ValidateBy } from 'class-validator';
import { MAINTENANCE_MAX_DURATION_MS, MAINTENANCE_MIN_DURATION_MS, MAINTENANCE_POLICIES, MaintenancePolicy, MAX_CRON_LENGTH } from '@timer/schedule';
import { Envelope } from '../../common/envelope';
import { APP_NAME, IsAppName, ISO_INSTANT_PATTERN, TIMER_ID, toTimerId, toTimerIds } from '../../common/validators';
import { instantMessage, isEpochMs, MAX_EPOCH_MS, parseRunAt } from '../../timers/dto/create-timer.dto';

/** Most timers one window may name. */
export const MAINTENANCE_MAX_TIMER_IDS = 1_000;

const INSTANT = [
  { type: 'integer', minimum: 0, maximum: MAX_EPOCH_MS, example: 1767225600000 },
  { type: 'string', format: 'date-time', pattern: ISO_INSTANT_PATTERN, example: '2026-01-01T00:00:00Z' },
];

const allTimerIds = (v: unknown): boolean => Array.isArray(v) && v.every((id) => typeof id === 'string' && TIMER_ID.test(id));

/** `POST /api/app/v1/maintenance`: a fixed window (`from`, `to`) or a recurring one (`cron`, `durationMs`). */
export class CreateMaintenanceDto {
  @ApiProperty({ example: 'billing', pattern: APP_NAME.source })
  @IsAppName()
  app!: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', pattern: TIMER_ID.source },
    example: ['42'],
    minItems: 1,
    maxItems: MAINTENANCE_MAX_TIMER_IDS,
    description: 'live timers of the app the window covers (404 for any other); left out: every timer of the app',
  })
  @IsOptional()
  @Transform(toTimerIds)
  @IsArray({ message: 'timerIds must be an array of timer ids' })
  @ArrayMinSize(1, { message: 'timerIds must name at least 1 timer (leave it out to cover every timer of the app)' })
  @ArrayMaxSize(MAINTENANCE_MAX_TIMER_IDS, { message: `timerIds must name at most ${MAINTENANCE_MAX_TIMER_IDS} timers` })
  @ValidateBy({ name: 'isTimerIds', validator: { validate: allTimerIds, defaultMessage: () => 'timerIds must hold timer ids (positive integers)' } })
  timerIds?: string[];

  @ApiPropertyOptional({ description: 'start of a fixed window (inclusive), epoch ms or ISO 8601; with `to`, not with `cron`', oneOf: INSTANT })
  @IsOptional()
  @Transform(parseRunAt)
  @ValidateBy({ name: 'isFrom', validator: { validate: isEpochMs, defaultMessage: (args) => instantMessage('from', args?.value) } })
  from?: number;

  @ApiPropertyOptional({ description: 'end of a fixed window (exclusive), after `from`', oneOf: INSTANT })
  @IsOptional()
  @Transform(parseRunAt)
  @ValidateBy({ name: 'isTo', validator: { validate: isEpochMs, defaultMessage: (args) => instantMessage('to', args?.value) } })
  to?: number;

  @ApiPropertyOptional({ example: '0 0 2 * * 0', maxLength: MAX_CRON_LENGTH, description: 'starts of a recurring window (5 or 6 fields, evaluated in UTC); with `durationMs`' })
  @IsOptional()
  @IsString({ message: 'cron must be a string' })
  @MaxLength(MAX_CRON_LENGTH, { message: `cron must be at most ${MAX_CRON_LENGTH} characters` })
  cron?: string;

  @ApiPropertyOptional({ type: 'integer', example: 1_800_000, minimum: MAINTENANCE_MIN_DURATION_MS, maximum: MAINTENANCE_MAX_DURATION_MS, description: 'how long each occurrence of a recurring window lasts (ms)' })
  @IsOptional()
  @IsInt({ message: `durationMs must be an integer from ${MAINTENANCE_MIN_DURATION_MS} to ${MAINTENANCE_MAX_DURATION_MS}` })
  durationMs?: number;

  @ApiProperty({ enum: MAINTENANCE_POLICIES, description: '`skip`: fires in the window are recorded missed (`skipped: maintenance`); `defer`: recorded missed (`deferred: maintenance, to <end>`) and one fire per timer is made at the window\'s end' })
  @IsIn(MAINTENANCE_POLICIES, { message: `policy must be one of ${MAINTENANCE_POLICIES.join(', ')}` })
  policy!: MaintenancePolicy;
}

export class MaintenanceQuery {
  @ApiProperty({ example: 'billing', pattern: APP_NAME.source })
  @IsAppName()
  app!: string;
}

export class DeleteMaintenanceQuery extends MaintenanceQuery {
  @ApiProperty({ example: '3', description: 'the window\'s id' })
  @Transform(toTimerId)
  @IsString({ message: 'id must be a positive integer' })
  @Matches(TIMER_ID, { message: 'id must be a positive integer' })
  id!: string;
}

export class MaintenanceWindowView {
  @ApiProperty({ example: '3' })
  id!: string;

  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({ type: [String], nullable: true, description: 'null: every timer of the app' })
  timerIds!: string[] | null;

  @ApiProperty({ type: Number, nullable: true })
  from!: number | null;

  @ApiProperty({ type: Number, nullable: true })
  to!: number | null;

  @ApiProperty({ type: String, nullable: true })
  cron!: string | null;

  @ApiProperty({ type: Number, nullable: true })
  durationMs!: number | null;

  @ApiProperty({ enum: MAINTENANCE_POLICIES })
  policy!: MaintenancePolicy;

  @ApiProperty({ type: Number, nullable: true, description: 'a recurring window\'s next start (epoch ms); null for a fixed one' })
  nextStart!: number | null;

  @ApiProperty({ example: 1767225600000 })
  createdAt!: number;
}

export class MaintenanceWindowResponse extends Envelope {
  @ApiProperty({ type: MaintenanceWindowView })
  data!: MaintenanceWindowView;
}

export class MaintenanceListResponse extends Envelope {
  @ApiProperty({ type: [MaintenanceWindowView] })
  data!: MaintenanceWindowView[];
}
