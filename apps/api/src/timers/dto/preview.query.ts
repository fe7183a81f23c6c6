import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_PREVIEW_COUNT } from '@timer/schedule';
import { Envelope } from '../../common/envelope';
import { CreateTimerDto, InstantBound } from './create-timer.dto';
import { APP_NAME, IsAppName, toQueryInteger } from '../../common/validators';
import { IsCalendarNames, MAX_TIMER_CALENDARS } from '../calendar-resolver';

/**
 * `GET /api/timer/v1/preview`: a schedule as create takes it (the same fields and rules), and where
 * and how far to look. Nothing is created.
 */
export class PreviewQuery extends PickType(CreateTimerDto, ['cron', 'runAt', 'every', 'timeZone', 'startAt', 'endAt', 'dstGap', 'dstOverlap', 'onExcluded'] as const) {
  @ApiPropertyOptional({ example: 'billing', pattern: APP_NAME.source, description: 'The app whose `calendars` are applied (required with them; a token of the app or the admin token).' })
  @IsOptional()
  @IsAppName()
  app?: string;

  @ApiPropertyOptional({
    type: String,
    example: 'de-holidays,weekend',
    description: 'Comma-separated names of calendars of `app` to apply, as a timer with `calendars` and `onExcluded` would: excluded and moved fires are marked.',
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.split(',').filter((n) => n !== '') : value))
  @IsArray({ message: 'calendars must be comma-separated calendar names' })
  @ArrayMaxSize(MAX_TIMER_CALENDARS, { message: `calendars: at most ${MAX_TIMER_CALENDARS} calendars` })
  @IsCalendarNames()
  calendars?: string[];

  @IsOptional()
  @InstantBound('from', 'First instant looked at (inclusive); default now. Also the anchor of `every` without `startAt`.')
  from?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PREVIEW_COUNT, default: 10, description: 'How many fires (entries flagged `skipped` do not count).' })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsInt()
  @Min(1)
  @Max(MAX_PREVIEW_COUNT)
  count?: number;
}

/** One upcoming fire time of a preview. */
export class PreviewFireView {
  @ApiProperty({ example: 1774746000000, description: 'epoch ms (for `skipped`: the instant of the gap, not a fire)' })
  at!: number;

  @ApiProperty({ example: '2026-03-29T01:00:00.000Z' })
  utc!: string;

  @ApiProperty({ example: '2026-03-29T03:00:00+02:00', description: 'wall time in `timeZone` with its UTC offset' })
  local!: string;

  @ApiPropertyOptional({
    enum: ['shifted', 'repeated', 'skipped'],
    description:
      '`shifted`: the cron\'s wall time (`nominal`) fell in a DST gap and fires at the gap\'s end (dstGap shift); `repeated`: the second ' +
      'occurrence of a wall time a DST overlap doubled; `skipped`: a wall time (`nominal`) a gap took away, not fired (dstGap skip)',
  })
  dst?: string;

  @ApiPropertyOptional({ example: '2026-03-29T02:30:00', description: 'shifted and skipped: the wall time the cron named, which did not exist' })
  nominal?: string;

  @ApiPropertyOptional({ example: 'de-holidays', description: 'with `calendars`: the calendar that excludes the day the schedule gave (the fire is `excluded` or `movedFrom` it)' })
  calendar?: string;

  @ApiPropertyOptional({ example: true, description: 'with `calendars`: not delivered, recorded missed with the error `calendar <name>`' })
  excluded?: boolean;

  @ApiPropertyOptional({ example: 1774659600000, description: 'with `calendars`: a moved fire, the time the schedule gave (epoch ms)' })
  movedFrom?: number;
}

export class PreviewResult {
  @ApiProperty({ example: 'Europe/Berlin' })
  timeZone!: string;

  @ApiProperty({ type: [PreviewFireView], description: 'ascending; fewer than `count` when the schedule ends or fires beyond 100 years' })
  fires!: PreviewFireView[];
}

export class PreviewResponse extends Envelope {
  @ApiProperty({ type: PreviewResult })
  data!: PreviewResult;
}
