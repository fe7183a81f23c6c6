import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { MAX_CALENDAR_DATES_ENTRIES, MAX_CALENDAR_HOLIDAYS } from '@timer/schedule';
import { AppNameDto } from '../../apps/dto/app.dto';
import { Envelope } from '../../common/envelope';
import { CALENDAR_NAME } from '../../timers/calendar-resolver';

const NAME_MESSAGE = `name must be 1 to 64 characters: letters, digits, _ . - (not first); got a value that is not`;

export class DateRangeView {
  @ApiProperty({ example: '2026-12-27', format: 'date', description: 'first excluded day (inclusive)' })
  from!: string;
  @ApiProperty({ example: '2026-12-31', format: 'date', description: 'last excluded day (inclusive), not before `from`; at most 366 days after it' })
  to!: string;
}

export class HolidayRuleView {
  @ApiProperty({ example: 'DE', description: 'ISO 3166-1 alpha-2 country code known to `date-holidays`; its public holidays are excluded' })
  country!: string;
  @ApiPropertyOptional({ example: 'BY', description: 'a region (state) code of the country, adding its own public holidays' })
  region?: string;
}

export class CalendarExcludeView {
  @ApiPropertyOptional({
    type: 'array',
    maxItems: MAX_CALENDAR_DATES_ENTRIES,
    items: { oneOf: [{ type: 'string', format: 'date', example: '2026-12-24' }, { type: 'object', required: ['from', 'to'], additionalProperties: false, properties: { from: { type: 'string', format: 'date', example: '2026-12-27' }, to: { type: 'string', format: 'date', example: '2026-12-31' } } }] },
    description: 'days (`YYYY-MM-DD`) and ranges `{from, to}` excluded; at most TIMER_QUOTA_MAX_CALENDAR_DATES entries',
  })
  dates?: (string | DateRangeView)[];

  @ApiPropertyOptional({ type: [HolidayRuleView], maxItems: MAX_CALENDAR_HOLIDAYS, description: 'countries (and regions) whose public holidays are excluded' })
  holidays?: HolidayRuleView[];

  @ApiPropertyOptional({ type: [Number], example: [6, 7], maxItems: 7, description: 'ISO weekday numbers excluded: 1 = Monday .. 7 = Sunday' })
  weekdays?: number[];
}

/** `PUT /api/app/v1/calendars/<name>?app=`: the calendar's new zone and exclusions (replaced whole). */
export class PutCalendarDto {
  @ApiPropertyOptional({ example: 'Europe/Berlin', maxLength: 64, description: 'IANA zone the days are read in; left out: the zone of each timer that uses it' })
  @IsOptional()
  @IsString({ message: 'timeZone must be a string' })
  @MaxLength(64, { message: 'timeZone must be at most 64 characters' })
  timeZone?: string;

  @ApiProperty({ type: CalendarExcludeView, description: 'the days the calendar excludes; checked field by field (a 400 names e.g. `exclude.holidays[0].country`)' })
  @IsObject({ message: 'exclude must be an object with dates, holidays or weekdays' })
  exclude!: Record<string, unknown>;
}

/** `POST /api/app/v1/calendars`. */
export class CreateCalendarDto extends PutCalendarDto {
  @ApiProperty({ example: 'billing', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' })
  @IsString({ message: 'app must be a string' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, { message: 'app must be 1 to 64 characters: letters, digits, _ . - (not first)' })
  app!: string;

  @ApiProperty({ example: 'de-holidays', pattern: CALENDAR_NAME.source, description: 'unique in the app; timers refer to it by this name' })
  @IsString({ message: 'name must be a string' })
  @Matches(CALENDAR_NAME, { message: NAME_MESSAGE })
  name!: string;
}

/** `?app=` of the calendar routes. */
export class CalendarAppQuery extends AppNameDto {}

export class CalendarView {
  @ApiProperty({ example: 'billing' })
  app!: string;
  @ApiProperty({ example: 'de-holidays' })
  name!: string;
  @ApiProperty({ type: String, nullable: true, example: 'Europe/Berlin', description: 'null: each timer\'s own zone' })
  timeZone!: string | null;
  @ApiProperty({ type: CalendarExcludeView })
  exclude!: CalendarExcludeView;
  @ApiProperty({ type: [String], description: 'ids of the live timers that use it (GET of one calendar only)', required: false })
  timers?: string[];
  @ApiProperty({ example: 1767225600000 })
  createdAt!: number;
  @ApiProperty({ example: 1767225600000 })
  updatedAt!: number;
}

export class CalendarResponse extends Envelope {
  @ApiProperty({ type: CalendarView })
  data!: CalendarView;
}

export class CalendarListResponse extends Envelope {
  @ApiProperty({ type: [CalendarView] })
  data!: CalendarView[];
}

export class CalendarEditView extends CalendarView {
  @ApiProperty({ example: 2, description: 'timers whose open future fires were regenerated' })
  regenerated!: number;
}

export class CalendarEditResponse extends Envelope {
  @ApiProperty({ type: CalendarEditView })
  data!: CalendarEditView;
}
