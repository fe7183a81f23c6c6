import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateBy, ValidateNested } from 'class-validator';
import { DST_GAPS, DST_OVERLAPS, DstGap, DstOverlap, MAX_CRON_FIRES, MAX_FIRES, ON_EXCLUDED, OnExcluded, parseInterval, ScheduleError } from '@timer/schedule';
import { CATCHUP_POLICIES, CATCHUP_WINDOW_MAX_MS, CatchupPolicy, JITTER_MAX_MS, OVERLAP_POLICIES, OverlapPolicy } from '@timer/dal';
import { APP_NAME, IsAppName, IsCleanName, ISO_INSTANT_PATTERN, IsTimeZoneSpelling, parseIsoInstant } from '../../common/validators';
import { FailureWebhookDto } from '../../dlq/dto/dlq.dto';
import { NotifyHttpParamDto } from './notify-http-param.dto';
import { RetryPolicyDto } from './retry-policy.dto';
import { IsCalendarNames, MAX_TIMER_CALENDARS } from '../calendar-resolver';

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

/** The validation message for a refused instant field (`startAt`, `endAt`). */
export function instantMessage(field: string, value: unknown): string {
  const iso = typeof value === 'string' ? parseIsoInstant(value) : undefined;
  if (iso && 'problem' in iso) return `${field} ${JSON.stringify(value)} is not a real date-time: ${iso.problem}`;
  return `${field} must be epoch milliseconds or an ISO 8601 date-time with Z or an offset`;
}

/** The pattern of `every` (the range, 1s to 366d, is checked beside it). */
export const INTERVAL_PATTERN = '^(\\d+d)?(\\d+h)?(\\d+m)?(\\d+s)?$';

const isInterval = (v: unknown): boolean => intervalMessage(v) === undefined;

/** Why `every` is refused (the schedule lib's message, naming `every`), or undefined when it is fine. */
export function intervalMessage(v: unknown): string | undefined {
  try {
    parseInterval(v);
    return undefined;
  } catch (e) {
    if (e instanceof ScheduleError) return e.message;
    throw e;
  }
}

export const isEpochMs = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_EPOCH_MS;

/**
 * A bound of a cron or every timer (`startAt`, `endAt`): an instant given as `runAt` is (epoch ms or ISO
 * 8601 with `Z`/offset), documented as such, refused with a message naming `field`.
 */
export function InstantBound(field: 'startAt' | 'endAt' | 'from', description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      description: `${description} Epoch ms or ISO 8601 with \`Z\`/offset.`,
      oneOf: [
        { type: 'integer', minimum: 0, maximum: MAX_EPOCH_MS, example: 1767225600000 },
        { type: 'string', format: 'date-time', pattern: ISO_INSTANT_PATTERN, example: '2026-01-01T00:00:00Z' },
      ],
    }),
    Transform(parseRunAt),
    ValidateBy({ name: `is${field[0].toUpperCase()}${field.slice(1)}`, validator: { validate: isEpochMs, defaultMessage: (args) => instantMessage(field, args?.value) } }),
  );
}

/** `POST /api/timer/v1/def`: the seed's fields (app, name, cron, notifyHTTPParam) plus the extensions. */
export class CreateTimerDto {
  @ApiProperty({ description: 'Application the timer belongs to.', example: 'billing', pattern: APP_NAME.source })
  @IsAppName()
  app!: string;

  @ApiProperty({
    description: 'Unique among the live timers of the app (reusable once deleted). Not blank; no control or bidirectional control characters.',
    example: 'daily-report',
    maxLength: 255,
    // Not blank, no control or bidirectional control characters (`IsCleanName`).
    pattern: '^(?=.*\\S)[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]*$',
  })
  @IsString()
  @MaxLength(255)
  @IsCleanName()
  name!: string;

  @ApiPropertyOptional({
    description:
      'Cron expression: 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first. Evaluated in ' +
      '`timeZone`. Exactly one of `cron`, `runAt` and `every` per timer.',
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
      { type: 'string', format: 'date-time', pattern: ISO_INSTANT_PATTERN, example: '2026-01-01T00:00:00Z' },
    ],
  })
  @IsOptional()
  @Transform(parseRunAt)
  @ValidateBy({
    name: 'isRunAt',
    validator: { validate: isEpochMs, defaultMessage: (args) => runAtMessage(args?.value) },
  })
  runAt?: number;

  @ApiPropertyOptional({
    description:
      'Extension: interval schedule instead of `cron` or `runAt`: units d, h, m, s, each at most once and in that order ' +
      `("90s", "5m", "1h30m"), at least 1s, at most 366d. Fires at startAt + k * every (k >= 0), on elapsed time (the zone does not apply). ` +
      'GET shows it canonical ("90s" as "1m30s").',
    example: '1h30m',
    pattern: INTERVAL_PATTERN,
    minLength: 2,
    maxLength: 64,
  })
  @IsOptional()
  @ValidateBy({ name: 'isInterval', validator: { validate: isInterval, defaultMessage: (args) => intervalMessage(args?.value) ?? 'every is invalid' } })
  every?: string;

  @ApiPropertyOptional({
    description: 'Extension: IANA time zone the cron is evaluated in, spelled as its name (`europe/berlin` is refused naming `Europe/Berlin`).',
    default: 'UTC',
    example: 'Europe/Berlin',
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @IsTimeZoneSpelling()
  timeZone?: string;

  @ApiPropertyOptional({
    enum: DST_GAPS,
    default: 'shift',
    description:
      'Extension (cron timers with fixed hours): a wall time that a spring-forward gap skips fires once at the end of the gap ' +
      '(`shift`) or not at all (`skip`). A cron whose hour field is `*` runs on elapsed time whatever this says; on `runAt` and ' +
      '`every` only the default is accepted.',
  })
  @IsOptional()
  @IsIn(DST_GAPS)
  dstGap?: DstGap;

  @ApiPropertyOptional({
    enum: DST_OVERLAPS,
    default: 'first',
    description:
      'Extension (cron timers with fixed hours): a wall time that a fall-back overlap repeats fires at its first occurrence ' +
      '(`first`) or at both (`both`). A cron whose hour field is `*` fires at both whatever this says; on `runAt` and `every` ' +
      'only the default is accepted.',
  })
  @IsOptional()
  @IsIn(DST_OVERLAPS)
  dstOverlap?: DstOverlap;

  @IsOptional()
  @InstantBound(
    'startAt',
    'Extension (cron and every timers): no fire before this instant (inclusive); the anchor of `every`, default the creation ' +
      'instant rounded up to the whole second (stored and shown).',
  )
  startAt?: number;

  @IsOptional()
  @InstantBound('endAt', 'Extension (cron and every timers): no fire after this instant (inclusive). After startAt, and some fire of the schedule must lie in [max(now, startAt), endAt].')
  endAt?: number;

  @ApiPropertyOptional({
    description:
      'Extension (cron and every timers): how many fires the schedule has, counted from startAt (without startAt: from the write ' +
      `that set the schedule or its bounds); later ones are never created. At most ${MAX_CRON_FIRES} for a cron.`,
    type: 'integer',
    minimum: 1,
    maximum: MAX_FIRES,
    example: 10,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_FIRES)
  maxFires?: number;

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

  @ApiPropertyOptional({
    enum: OVERLAP_POLICIES,
    default: 'allow',
    description:
      'Extension: what a fire does while the previous fire of this timer is still in flight (not yet succeeded, dead-lettered or ' +
      'failed; retries included): `allow` runs it anyway, `skip` records it missed with the error `skipped: overlap ...`, ' +
      '`buffer_one` lets one fire wait for the running one and skips further ones.',
  })
  @IsOptional()
  @IsIn(OVERLAP_POLICIES)
  overlapPolicy?: OverlapPolicy;

  @ApiPropertyOptional({
    enum: CATCHUP_POLICIES,
    description:
      'Extension: fires found more than 5 s late (after downtime): `all` delivers each one within `catchupWindowMs`, `latest` only the ' +
      'most recent one (the others are recorded missed, error `coalesced`), `none` records them missed. Absent: `misfirePolicy` ' +
      'decides (fire_late = all, skip = none). Run now and replays are exempt.',
  })
  @IsOptional()
  @IsIn(CATCHUP_POLICIES)
  catchupPolicy?: CatchupPolicy;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: CATCHUP_WINDOW_MAX_MS,
    description: 'Extension: how late (ms after its time) a fire may still be delivered; later ones are recorded missed (`late by <ms>`). Absent: TIMER_MISFIRE_WINDOW_MS.',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(CATCHUP_WINDOW_MAX_MS)
  catchupWindowMs?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: JITTER_MAX_MS,
    default: 0,
    description:
      'Extension: each fire is delayed by a fixed amount in [0, jitterMs) derived from its fire id (the same on every attempt); the ' +
      'callback carries the nominal time in `X-Timer-Scheduled-At` and the delayed one in `X-Timer-Jittered-At`.',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(JITTER_MAX_MS)
  jitterMs?: number;

  @ApiPropertyOptional({
    type: 'boolean',
    default: false,
    description:
      'Extension: needs `jitterMs` > 0 (else 400). When a create, edit or enable would put a coming second over the capacity ' +
      '(TIMER_CAPACITY_FIRES_PER_SEC), the api moves all of this timer\'s fires by the least-loaded whole number of seconds in ' +
      '[0, jitterMs) instead of answering 429 (the same load gives the same offset, the smallest on a tie), and shows it as `spreadOffsetMs`; ' +
      'each fire is then delayed by that offset instead of the fire id\'s jitter. 429 when no offset fits.',
  })
  @IsOptional()
  @IsBoolean()
  autoSpread?: boolean;
  @ApiPropertyOptional({
    type: FailureWebhookDto,
    nullable: true,
    description:
      "Where this timer's failure notifications (dead-lettered and missed fires) go instead of the app's failure webhook; the same " +
      "rules as the app's (`PUT /api/app/v1/failure-webhook`), signed with the app's secret. Absent: the app's. In a PATCH, null removes it.",
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => FailureWebhookDto)
  failureWebhook?: FailureWebhookDto | null;
  @ApiPropertyOptional({
    type: FailureWebhookDto,
    nullable: true,
    description:
      "Where each final answer of the callback (the last attempt's: succeeded or failed for good) is POSTed as `{fireId, timerId, attempt, status, " +
      'headers, body, truncated}`, signed like every callback; best effort, never delaying the fire (docs/callback-answers.md). The same URL, ' +
      'address and header rules as `failureWebhook`. Absent: none. In a PATCH, null removes it.',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => FailureWebhookDto)
  resultWebhook?: FailureWebhookDto | null;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' },
    maxItems: MAX_TIMER_CALENDARS,
    example: ['de-holidays'],
    description:
      'Extension: names of calendars of the app (`POST /api/app/v1/calendars`; 400 naming `calendars` for one it lacks) whose excluded days ' +
      'this timer does not fire on; a business day is one none of them excludes (docs/calendars.md). In a PATCH, [] removes them.',
  })
  @IsOptional()
  @IsArray({ message: 'calendars must be an array of calendar names' })
  @ArrayMaxSize(MAX_TIMER_CALENDARS, { message: `calendars: at most ${MAX_TIMER_CALENDARS} calendars per timer` })
  @IsCalendarNames()
  calendars?: string[] | null;

  @ApiPropertyOptional({
    enum: ON_EXCLUDED,
    default: 'skip',
    description:
      'Extension: a fire on a day a calendar excludes is `skip`ped (recorded missed, `calendar <name>`), or moved to the same wall time of the ' +
      '`nextBusinessDay` or `previousBusinessDay` (looked for over at most 31 days, else recorded missed; a moved fire that meets another fire is one fire).',
  })
  @IsOptional()
  @IsIn(ON_EXCLUDED, { message: `onExcluded must be one of ${ON_EXCLUDED.join(', ')}` })
  onExcluded?: OnExcluded;
}
