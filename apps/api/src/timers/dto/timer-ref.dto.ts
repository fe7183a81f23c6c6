import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Matches } from 'class-validator';
import { IsAppName, TIMER_ID, toTimerId } from '../../common/validators';

const ID_MESSAGE = 'id must be a positive integer timer id';

/** `{id, app}`: the body of delete, enable, unable and run, and the query of get. */
export class TimerRefDto {
  @ApiProperty({ description: 'Timer id (a JSON number or a digit string).', oneOf: [{ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }, { type: 'string', pattern: TIMER_ID.source }], example: 42 })
  @Transform(toTimerId)
  @IsString({ message: ID_MESSAGE })
  @Matches(TIMER_ID, { message: ID_MESSAGE })
  id!: string;

  @ApiProperty({ example: 'billing' })
  @IsAppName()
  app!: string;
}

