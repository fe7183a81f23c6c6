import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsOptional, IsString, Matches, ValidateBy, ValidateIf, ValidateNested } from 'class-validator';
import { parseFireId } from '@timer/contracts';
import { AppNameDto } from '../../apps/dto/app.dto';
import { Envelope } from '../../common/envelope';
import { HEADER_MAP_SCHEMA, IsAppName, IsCallbackUrl, IsHeaderMap, MAX_URL_LENGTH, TIMER_ID, toTimerId } from '../../common/validators';
import { PageQuery } from '../../timers/dto/list-timers.query';

/** Most dead letters one replay request re-delivers (`fireIds` longer than this: 400); `timerId`/`all` go on with `remaining`. */
export const REPLAY_MAX = 500;

/** `GET /api/app/v1/dlq`: the app's dead letters, latest run time first. */
export class DeadLettersQuery extends PageQuery {
  @ApiProperty({ example: 'billing' })
  @IsAppName()
  app!: string;
}

const FIRE_ID_EXAMPLE = '42-1767225600000';

/** `{app, fireIds? | timerId? | all}`: exactly one selector (the service refuses none or several, naming them). */
export class DeadLetterSelectionDto extends AppNameDto {
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', pattern: '^[0-9]{1,20}-[0-9]{1,16}$' },
    minItems: 1,
    maxItems: REPLAY_MAX,
    example: [FIRE_ID_EXAMPLE],
    description: `These fires (\`<timerId>-<runAtMs>\`, as in X-Timer-Fire-Id), 1 to ${REPLAY_MAX}. One that is not a dead letter of this app is listed in \`notFound\`.`,
  })
  @IsOptional()
  @IsArray({ message: 'fireIds must be an array of fire ids' })
  @ArrayMinSize(1, { message: 'fireIds must name at least one fire' })
  @ArrayMaxSize(REPLAY_MAX, { message: `fireIds may name at most ${REPLAY_MAX} fires a request` })
  @ValidateBy({
    name: 'isFireIdList',
    validator: {
      validate: (v: unknown) => Array.isArray(v) && v.every((id) => typeof id === 'string' && parseFireId(id) !== null),
      defaultMessage: () => 'fireIds must contain fire ids: <timerId>-<runAtMs> (as in X-Timer-Fire-Id)',
    },
  })
  fireIds?: string[];

  @ApiPropertyOptional({ example: '42', description: 'Every dead letter of this timer (a deleted timer\'s too).', pattern: TIMER_ID.source })
  @IsOptional()
  @Transform(toTimerId)
  @IsString({ message: 'timerId must be a positive integer timer id' })
  @Matches(TIMER_ID, { message: 'timerId must be a positive integer timer id' })
  timerId?: string;

  @ApiPropertyOptional({ type: Boolean, enum: [true], description: 'Every dead letter of the app.' })
  @IsOptional()
  @ValidateBy({ name: 'isTrue', validator: { validate: (v: unknown) => v === true, defaultMessage: () => 'all must be true (or left out)' } })
  all?: boolean;
}

/** `{url, headers?}`: where the app's failure notifications are POSTed. */
export class FailureWebhookDto {
  @ApiProperty({
    description:
      'Absolute http(s) URL. A literal loopback/private address (or `localhost`) is refused unless TIMER_CALLBACK_ALLOW_PRIVATE=true; ' +
      'the notifier checks the resolved address at call time, as callbacks are.',
    example: 'https://hooks.example.com/timer-failures',
    maxLength: MAX_URL_LENGTH,
  })
  @IsCallbackUrl()
  url!: string;

  @ApiPropertyOptional({
    description: 'Request headers (`{name: value}` or `{name: [values]}`), e.g. an Authorization; X-Timer-* are reserved.',
    ...HEADER_MAP_SCHEMA,
    example: { Authorization: 'Bearer abc' },
  })
  @IsOptional()
  @IsHeaderMap()
  headers?: Record<string, string | string[]>;
}

export class SetFailureWebhookDto extends AppNameDto {
  @ApiProperty({ type: FailureWebhookDto, nullable: true, description: 'null removes the webhook (no further notifications).' })
  @IsDefined({ message: 'failureWebhook must be {url, headers?} or null' })
  @ValidateIf((_o, v) => v !== null)
  @ValidateNested()
  @Type(() => FailureWebhookDto)
  failureWebhook!: FailureWebhookDto | null;
}

export class DeadLetterView {
  @ApiProperty({ example: FIRE_ID_EXAMPLE, description: '`<timerId>-<runAtMs>`, as in X-Timer-Fire-Id' })
  fireId!: string;

  @ApiProperty({ example: '42' })
  timerId!: string;

  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({ example: 1767225600000, description: 'scheduled time (epoch ms)' })
  runAt!: number;

  @ApiProperty({ example: 1767225631000, description: 'when the fire was recorded failed (epoch ms)' })
  failedAt!: number;

  @ApiProperty({ example: 3, description: 'attempts made' })
  attempts!: number;

  @ApiProperty({ example: 'attempts exhausted', enum: ['attempts exhausted', 'not retryable'], description: 'why no further attempt was made' })
  reason!: string;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'HTTP 500', description: 'the last attempt\'s error' })
  error!: string | null;

  @ApiPropertyOptional({ type: Number, nullable: true, example: 500, description: 'the last attempt\'s HTTP status; null when none came' })
  httpStatus!: number | null;
}

export class DeadLettersResponse extends Envelope {
  @ApiProperty({ type: [DeadLetterView] })
  data!: DeadLetterView[];

  @ApiProperty({ example: 1, description: 'dead letters of the app (all pages)' })
  total!: number;
}

export class ReplayView {
  @ApiProperty({ example: 1, description: 'dead letters re-delivered by this request (each once)' })
  replayed!: number;

  @ApiProperty({ type: [String], example: [FIRE_ID_EXAMPLE], description: 'the fires re-delivered' })
  fireIds!: string[];

  @ApiProperty({ type: [String], example: [], description: '`fireIds` given that are not dead letters of this app (never were, replayed already, purged, or another app\'s)' })
  notFound!: string[];

  @ApiProperty({ example: 0, description: `dead letters the selector still holds (a request replays at most ${REPLAY_MAX}): repeat the request for them` })
  remaining!: number;
}

export class ReplayResponse extends Envelope {
  @ApiProperty({ type: ReplayView })
  data!: ReplayView;
}

export class PurgeView {
  @ApiProperty({ example: 1, description: 'dead letters removed from the list (their failed records stay)' })
  purged!: number;
}

export class PurgeResponse extends Envelope {
  @ApiProperty({ type: PurgeView })
  data!: PurgeView;
}

export class FailureWebhookView {
  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({ type: FailureWebhookDto, nullable: true })
  failureWebhook!: FailureWebhookDto | null;
}

export class FailureWebhookResponse extends Envelope {
  @ApiProperty({ type: FailureWebhookView })
  data!: FailureWebhookView;
}
