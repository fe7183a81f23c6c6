import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { IsAppName, TIMER_ID, toTimerId } from '../../common/validators';
import { PageQuery } from '../../timers/dto/list-timers.query';

export const TASK_STATUSES = [0, 1, 2, 3, 4] as const;

/** `GET /api/task/v1/records`: the fires of one timer, latest run time first. */
export class RecordsQuery extends PageQuery {
  @ApiProperty({ example: 'billing' })
  @IsAppName()
  app!: string;

  @ApiProperty({ example: '42', description: 'Timer id.' })
  @Transform(toTimerId)
  @IsString({ message: 'timerID must be a positive integer timer id' })
  @Matches(TIMER_ID, { message: 'timerID must be a positive integer timer id' })
  timerID!: string;

  @ApiPropertyOptional({ enum: TASK_STATUSES, description: '0 pending, 1 running, 2 succeeded, 3 failed, 4 missed.' })
  @IsOptional()
  @Type(() => Number)
  @IsIn(TASK_STATUSES, { message: 'status must be one of 0 (pending), 1 (running), 2 (succeeded), 3 (failed), 4 (missed)' })
  status?: number;
}
