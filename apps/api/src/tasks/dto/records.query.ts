import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, Matches, ValidateBy } from 'class-validator';
import { FIRE_STATUS_CHOICES, FIRE_STATUS_DESCRIPTION, FIRE_STATUS_VALUES, parseFireId } from '@timer/contracts';
import { IsAppName, parseIsoInstant, TIMER_ID, toBoolean, toQueryInteger, toTimerId } from '../../common/validators';
import { isEpochMs, parseRunAt } from '../../timers/dto/create-timer.dto';
import { PageQuery } from '../../timers/dto/list-timers.query';

/** The message for a refused `from` or `to`, naming the impossible field of an ISO date when there is one. */
function instantMessage(field: string, value: unknown): string {
  const iso = typeof value === 'string' ? parseIsoInstant(value) : undefined;
  if (iso && 'problem' in iso) return `${field} ${JSON.stringify(value)} is not a real date-time: ${iso.problem}`;
  return `${field} must be epoch milliseconds or an ISO 8601 date-time with Z or an offset`;
}

/** An optional instant query parameter (`from`, `to`): epoch ms or ISO 8601 with an offset, as epoch ms. */
function OptionalInstant(field: string, description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      description,
      oneOf: [{ type: 'integer', example: 1767225600000 }, { type: 'string', format: 'date-time', example: '2026-01-01T00:00:00Z' }],
    }),
    IsOptional(),
    Transform(parseRunAt),
    ValidateBy({ name: 'isInstant', validator: { validate: isEpochMs, defaultMessage: (args) => instantMessage(field, args?.value) } }),
  );
}

/**
 * `GET /api/task/v1/records`: fire records of an app, of one timer (`timerID`, deleted ones too) or of
 * one fire (`fireID`), latest run time first. Future pending fires only with `includePending=true`.
 */
export class RecordsQuery extends PageQuery {
  @ApiProperty({ example: 'billing' })
  @IsAppName()
  app!: string;

  @ApiPropertyOptional({ example: '42', description: 'Only this timer\'s fires (a deleted timer\'s too). Without it and `fireID`: the whole app\'s.', pattern: TIMER_ID.source })
  @IsOptional()
  @Transform(toTimerId)
  @IsString({ message: 'timerID must be a positive integer timer id' })
  @Matches(TIMER_ID, { message: 'timerID must be a positive integer timer id' })
  timerID?: string;

  @ApiPropertyOptional({
    example: '42-1767225600000',
    description: 'Only this fire: `<timerId>-<runAtMs>`, as in `X-Timer-Fire-Id` and `fireId` of a record. Shown whatever its state (`includePending` aside).',
    pattern: '^[0-9]{1,20}-[0-9]{1,16}$',
  })
  @IsOptional()
  @ValidateBy({
    name: 'isFireId',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && parseFireId(v) !== null,
      defaultMessage: () => 'fireID must be a fire id: <timerId>-<runAtMs> (as in X-Timer-Fire-Id)',
    },
  })
  fireID?: string;

  @ApiPropertyOptional({ enum: [...FIRE_STATUS_VALUES], description: FIRE_STATUS_DESCRIPTION })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsIn(FIRE_STATUS_VALUES, { message: `status must be one of ${FIRE_STATUS_CHOICES}` })
  status?: number;

  @OptionalInstant('from', 'Only fires with runAt >= from: epoch ms or ISO 8601 with `Z`/offset.')
  from?: number;

  @OptionalInstant('to', 'Only fires with runAt < to (after `from`): epoch ms or ISO 8601 with `Z`/offset.')
  to?: number;

  @ApiPropertyOptional({ type: Boolean, default: false, description: 'Also list pending fires still to come (runAt after now); left out by default.' })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'includePending must be true or false' })
  includePending?: boolean;
}
