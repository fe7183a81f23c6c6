import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Envelope, ErrorEnvelope } from '../../common/envelope';
import { CATCHUP_POLICIES, OVERLAP_POLICIES, TIMER_CHANGES } from '@timer/dal';
import { DST_GAPS, DST_OVERLAPS, ON_EXCLUDED } from '@timer/schedule';
import { FailureWebhookDto } from '../../dlq/dto/dlq.dto';
import { CALLBACK_METHODS } from './notify-http-param.dto';
import { MISFIRE_POLICIES } from './create-timer.dto';

export class NotifyHttpParamView {
  @ApiProperty({ example: 'https://hooks.example.com/timer' })
  url!: string;

  @ApiProperty({ enum: CALLBACK_METHODS })
  method!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } })
  header?: Record<string, string[]>;

  @ApiPropertyOptional()
  body?: string;

  @ApiPropertyOptional({ type: 'integer', description: "this timer's callback timeout (ms); absent: the executor's TIMER_CALLBACK_TIMEOUT_MS" })
  timeoutMs?: number;

  @ApiPropertyOptional({ type: 'boolean', description: 'present (true) when placeholders in url, header values and body are filled per fire' })
  template?: boolean;
}

export class RetryPolicyView {
  @ApiProperty({ example: 3 })
  maxAttempts!: number;

  @ApiProperty({ example: 1000 })
  backoffMs!: number;
}

/** The definition of a timer (what an edit replaces) and its status. */
export class TimerDefinitionView {
  @ApiProperty({ example: 'daily-report' })
  name!: string;

  @ApiProperty({ nullable: true, type: String, example: '0 0 9 * * *', description: 'null for a one-shot timer' })
  cron!: string | null;

  @ApiProperty({ nullable: true, type: Number, description: 'one-shot fire time (epoch ms); null for a cron or every timer' })
  runAt!: number | null;

  @ApiProperty({ nullable: true, type: String, example: '1h30m', description: 'interval, canonical (d, h, m, s); null for a cron or one-shot timer' })
  every!: string | null;

  @ApiProperty({ example: 'UTC' })
  timeZone!: string;

  @ApiProperty({ enum: DST_GAPS, description: "a fixed-hour cron's wall times in a DST gap: once at the gap's end (`shift`) or not at all (`skip`)" })
  dstGap!: string;

  @ApiProperty({ enum: DST_OVERLAPS, description: "a fixed-hour cron's wall times in a DST overlap: first occurrence (`first`) or both (`both`)" })
  dstOverlap!: string;

  @ApiProperty({ nullable: true, type: Number, description: 'no fire before this (epoch ms, inclusive); an interval\'s anchor (default: its creation, rounded up to the second)' })
  startAt!: number | null;

  @ApiProperty({ nullable: true, type: Number, description: 'no fire after this (epoch ms, inclusive)' })
  endAt!: number | null;

  @ApiProperty({ nullable: true, type: Number, description: 'how many fires the schedule has, counted from startAt (else from the write that set it)' })
  maxFires!: number | null;

  @ApiProperty({ type: NotifyHttpParamView })
  notifyHTTPParam!: NotifyHttpParamView;

  @ApiProperty({ enum: [1, 2, 3], description: '1 = disabled (the seed\'s "unabled"), 2 = enabled, 3 = completed (its last fire passed and settled)' })
  status!: number;

  @ApiProperty({ type: RetryPolicyView })
  retryPolicy!: RetryPolicyView;

  @ApiProperty({ enum: MISFIRE_POLICIES })
  misfirePolicy!: string;

  @ApiProperty({ enum: OVERLAP_POLICIES, description: 'what a fire does while the previous fire of the timer is in flight' })
  overlapPolicy!: string;

  @ApiProperty({ enum: CATCHUP_POLICIES, nullable: true, type: String, description: 'late fires: all, latest or none; null: misfirePolicy decides (fire_late = all, skip = none)' })
  catchupPolicy!: string | null;

  @ApiProperty({ nullable: true, type: Number, description: 'how late a fire may still be delivered (ms); null: TIMER_MISFIRE_WINDOW_MS' })
  catchupWindowMs!: number | null;

  @ApiProperty({ type: 'integer', example: 0, description: 'each fire is delayed by a fixed amount in [0, jitterMs) derived from its fire id' })
  jitterMs!: number;
  @ApiProperty({ type: 'boolean', example: false, description: 'admission may spread the fires within jitterMs instead of refusing the timer' })
  autoSpread!: boolean;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: null,
    description: 'with autoSpread: the delay of every fire admission chose (whole seconds in [0, jitterMs)), used instead of the fire id\'s jitter; null without',
  })
  spreadOffsetMs!: number | null;
  @ApiProperty({ type: FailureWebhookDto, nullable: true, description: "this timer's failure webhook; null: the app's (PUT /api/app/v1/failure-webhook)" })
  failureWebhook!: FailureWebhookDto | null;
  @ApiProperty({ type: FailureWebhookDto, nullable: true, description: "where each final answer of this timer's callback is POSTed; null: nowhere" })
  resultWebhook!: FailureWebhookDto | null;
  @ApiProperty({ type: [String], example: ['de-holidays'], description: 'the calendars of the app whose excluded days the timer avoids (docs/calendars.md); [] for none' })
  calendars!: string[];
  @ApiProperty({ enum: ON_EXCLUDED, example: 'skip', description: 'what a fire on an excluded day does' })
  onExcluded!: string;
}

/** A fire a calendar excluded or moved (the timer's GET, the preview). */
export class CalendarMarkView {
  @ApiProperty({ example: 1767225600000, description: 'the fire time (one of nextFireTimes; for a moved fire its business day)' })
  at!: number;

  @ApiProperty({ example: 'de-holidays', description: 'the calendar that excludes the day the schedule gave' })
  calendar!: string;

  @ApiPropertyOptional({ example: true, description: 'not delivered: recorded missed with the error `calendar <name>` (onExcluded `skip`, or no business day within 31 days)' })
  excluded?: boolean;

  @ApiPropertyOptional({ example: 1767052800000, description: 'a moved fire: the time the schedule gave, on the excluded day' })
  movedFrom?: number;
}

/** A timer as the API shows it (seed 4.6.5 `data`, plus the extensions). */
/** A next fire time a maintenance window covers (the timer's GET). */
export class CoveredFireView {
  @ApiProperty({ example: 1767225600000, description: 'the fire time (one of nextFireTimes)' })
  at!: number;

  @ApiProperty({ example: '3', description: 'the covering window (GET /api/app/v1/maintenance)' })
  windowId!: string;

  @ApiProperty({ enum: ['skip', 'defer'] })
  policy!: 'skip' | 'defer';

  @ApiProperty({ example: 1767227400000, description: "the end of the window's occurrence: where a deferred fire goes" })
  until!: number;
}

export class TimerView extends TimerDefinitionView {
  @ApiProperty({ example: 42 })
  id!: number;

  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({
    example: 3,
    description: 'Increments on every change (edit, enable, disable); give it to PUT and PATCH. Starts at 1.',
  })
  version!: number;

  @ApiProperty({ description: 'creation time (epoch ms)' })
  createdAt!: number;

  @ApiPropertyOptional({
    type: [Number],
    description: 'GET only: the next fire times (epoch ms, ascending) after now, whatever the status; at most TIMER_PREVIEW_COUNT.',
  })
  nextFireTimes?: number[];

  @ApiPropertyOptional({
    type: [CoveredFireView],
    description: 'GET only: those of nextFireTimes that a maintenance window of the app covers (skipped, or deferred to `until`); left out when none is.',
  })
  maintenance?: CoveredFireView[];

  @ApiPropertyOptional({
    type: [CalendarMarkView],
    description: 'GET only: those of nextFireTimes that a calendar excluded (recorded missed) or moved to a business day; left out when none is.',
  })
  calendar?: CalendarMarkView[];
}

export class CreateTimerResponse extends Envelope {
  @ApiProperty({ example: 42, description: 'id of the new timer (created disabled: enable it to start firing)' })
  id!: number;

  @ApiProperty({ example: 1, description: 'version of the new timer (1)' })
  version!: number;
}

export class BatchCreatedTimer {
  @ApiProperty({ example: 42, description: 'id of the new timer' })
  id!: number;

  @ApiProperty({ example: 2, description: 'its version: 1, or 2 when enabled (create, then enable, as in its versions)' })
  version!: number;

  @ApiProperty({ description: 'whether it was enabled (the batch\'s `enable`)' })
  enabled!: boolean;

  @ApiProperty({ example: 72, description: 'fires pre-created by the enable (in [now, end of the next two migrator windows)); 0 when not enabled' })
  fires!: number;
}

export class BatchCreateResult {
  @ApiProperty({ type: [BatchCreatedTimer], description: 'the timers created, in the order given' })
  timers!: BatchCreatedTimer[];
}

export class BatchCreateResponse extends Envelope {
  @ApiProperty({ type: BatchCreateResult })
  data!: BatchCreateResult;
}

export class GetTimerResponse extends Envelope {
  @ApiProperty({ type: TimerView })
  data!: TimerView;
}

export class ListTimersResponse extends Envelope {
  @ApiProperty({ type: [TimerView] })
  data!: TimerView[];

  @ApiProperty({ example: 1, description: 'number of timers matching the filter (all pages)' })
  total!: number;
}

export class EnableResult {
  @ApiProperty({ description: 'false when the timer was already enabled (nothing was done)' })
  changed!: boolean;

  @ApiProperty({ description: 'fires pre-created in [now, end of the next two migrator windows)' })
  fires!: number;

  @ApiProperty({ description: 'end of the pre-created range (epoch ms, exclusive)' })
  until!: number;

  @ApiProperty({ example: 2, description: 'the version of the timer now (incremented when `changed`)' })
  version!: number;
}

export class EnableResponse extends Envelope {
  @ApiProperty({ type: EnableResult })
  data!: EnableResult;
}

export class RunResult {
  @ApiProperty({ example: '42-1767225600000', description: '`<timerId>-<runAtMs>`, the X-Timer-Fire-Id of the delivery' })
  fireId!: string;

  @ApiProperty({ example: 1767225600000 })
  runAt!: number;
}

export class RunResponse extends Envelope {
  @ApiProperty({ type: RunResult })
  data!: RunResult;
}

export class DisableResult {
  @ApiProperty({ description: 'false when the timer was already disabled (nothing was done)' })
  changed!: boolean;

  @ApiProperty({ example: 3, description: 'the version of the timer now (incremented when `changed`)' })
  version!: number;

  @ApiProperty({ example: 10780, description: 'pending fires after now deleted (from MySQL and the slice index): a disabled timer costs nothing; fires already due are recorded missed' })
  removedFires!: number;
}

export class DisableResponse extends Envelope {
  @ApiProperty({ type: DisableResult })
  data!: DisableResult;
}

export class EditResult {
  @ApiProperty({ example: 42 })
  id!: number;

  @ApiProperty({ example: 4, description: 'the version of the timer now: give it to the next PUT or PATCH' })
  version!: number;

  @ApiProperty({ description: 'false when the request gave the definition the timer already had (nothing was written, the version is unchanged)' })
  changed!: boolean;

  @ApiProperty({ description: 'pending fires (at or after now) the new definition does not have: recorded missed, error "superseded by version N"' })
  superseded!: number;

  @ApiProperty({ description: 'fires of the new definition created (enabled timers; through the prepared migrator windows)' })
  fires!: number;
}

export class EditResponse extends Envelope {
  @ApiProperty({ type: EditResult })
  data!: EditResult;
}

export class StaleVersion {
  @ApiProperty({ example: 4, description: 'the current version of the timer' })
  version!: number;
}

export class StaleVersionEnvelope extends ErrorEnvelope {
  // Only a stale version (40901) carries it; a taken name (40900) answers the same status without.
  @ApiPropertyOptional({ type: StaleVersion, description: 'with code 40901 (stale version) only' })
  data!: StaleVersion;
}

/** One version of a timer's definition: what it was, from when, and which change made it. */
export class TimerVersionView extends TimerDefinitionView {
  @ApiProperty({ example: 3 })
  version!: number;

  @ApiProperty({ enum: TIMER_CHANGES, description: "what made this version; 'existing' = the version a timer had when the history began" })
  change!: string;

  @ApiProperty({ description: 'when this version was written (epoch ms): it is the definition from then until the next version' })
  changedAt!: number;
}

export class TimerVersionsResponse extends Envelope {
  @ApiProperty({ type: [TimerVersionView], description: 'newest first; the first is the current definition' })
  data!: TimerVersionView[];

  @ApiProperty({ example: 3, description: 'number of versions (all pages)' })
  total!: number;
}
