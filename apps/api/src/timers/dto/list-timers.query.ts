import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsAppName, toQueryInteger } from '../../common/validators';

export const MAX_PAGE_SIZE = 100;

/** Paging shared by the list routes: 1-based `pageIndex`, `pageSize` 1..100 (default 1 and 10). */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  pageIndex: number = 1;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 10 })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  pageSize: number = 10;
}

/** `GET /api/timer/v1/defs`: the live timers of one app, newest first (id descending). */
export class ListTimersQuery extends PageQuery {
  @ApiProperty({ example: 'billing' })
  @IsAppName()
  app!: string;

  @ApiPropertyOptional({ description: 'Only timers whose name contains this text.', maxLength: 255 })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional({ enum: [1, 2, 3], description: '1 = disabled, 2 = enabled, 3 = completed.' })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsIn([1, 2, 3], { message: 'status must be 1 (disabled), 2 (enabled) or 3 (completed)' })
  status?: 1 | 2 | 3;
}
