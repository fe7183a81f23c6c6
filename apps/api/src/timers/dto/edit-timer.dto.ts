import { ApiProperty, ApiPropertyOptional, IntersectionType, OmitType, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsOptional, ValidateBy, ValidateNested } from 'class-validator';
import { PageQuery } from './list-timers.query';
import { CreateTimerDto } from './create-timer.dto';
import { NotifyHttpParamDto } from './notify-http-param.dto';
import { TimerRefDto } from './timer-ref.dto';

const VERSION_MESSAGE = 'version must be an integer: the current version of the timer (from create or GET)';
/** The column is a signed INT. */
const MAX_VERSION = 2_147_483_647;

/** The version an edit was made against: a stale one answers 409 with the current version. */
export class TimerVersionDto {
  @ApiProperty({
    description: 'The version the change was made against (from create, GET or the last change). A stale one is refused (409).',
    example: 3,
    type: 'integer',
    minimum: 1,
    maximum: MAX_VERSION,
  })
  @ValidateBy({ name: 'isVersion', validator: { validate: (v: unknown) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_VERSION, defaultMessage: () => VERSION_MESSAGE } })
  version!: number;
}

/** `PUT /api/timer/v1/def`: every field of a create (the same rules and defaults) plus the id and the version. */
export class UpdateTimerDto extends IntersectionType(CreateTimerDto, TimerRefDto, TimerVersionDto) {}

/** `notifyHTTPParam` of a PATCH: the fields given replace the stored ones; `header` or `body` null removes it. */
export class PatchNotifyHttpParamDto extends PartialType(NotifyHttpParamDto) {}

/**
 * `PATCH /api/timer/v1/def`: the id, the app, the version and only the fields to change (each with the
 * rules of create).
 */
export class PatchTimerDto extends IntersectionType(PartialType(OmitType(CreateTimerDto, ['app', 'notifyHTTPParam'] as const)), TimerRefDto, TimerVersionDto) {
  @ApiPropertyOptional({ type: PatchNotifyHttpParamDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PatchNotifyHttpParamDto)
  notifyHTTPParam?: PatchNotifyHttpParamDto;
}

/** `GET /api/timer/v1/def/versions`: a timer and a page of its versions. */
export class TimerVersionsQuery extends IntersectionType(TimerRefDto, PageQuery) {}
