import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { OptionalEpochMs } from '../../accounting/dto/accounting.query';
import { IsAppName, toQueryInteger } from '../../common/validators';

/** Smallest and largest bucket (1 s, 1 h), and the default (1 min). */
export const OVERVIEW_BUCKET_MIN_MS = 1_000;
export const OVERVIEW_BUCKET_MAX_MS = 3_600_000;
export const OVERVIEW_BUCKET_DEFAULT_MS = 60_000;

/** `GET /api/app/v1/overview`: fires per bucket of run_at in [from, to), lateness, backlog. */
export class OverviewQuery {
  @ApiPropertyOptional({ example: 'billing', description: 'The admin: one app instead of all apps. An app token always sees its own app (another is 403).' })
  @IsOptional()
  @IsAppName()
  app?: string;

  @OptionalEpochMs('from', 'Epoch ms; default: 1 hour before `to`. Rounded down to a multiple of bucketMs; [from, to) spans at most 24 hours.')
  from?: number;

  @OptionalEpochMs('to', 'Epoch ms, exclusive; default: now.')
  to?: number;

  @ApiPropertyOptional({ type: 'integer', example: OVERVIEW_BUCKET_DEFAULT_MS, description: `Bucket length (ms); default ${OVERVIEW_BUCKET_DEFAULT_MS}. At most 3600 buckets.` })
  @IsOptional()
  @Transform(toQueryInteger)
  @IsInt({ message: 'bucketMs must be an integer (milliseconds)' })
  @Min(OVERVIEW_BUCKET_MIN_MS, { message: `bucketMs must be at least ${OVERVIEW_BUCKET_MIN_MS}` })
  @Max(OVERVIEW_BUCKET_MAX_MS, { message: `bucketMs must be at most ${OVERVIEW_BUCKET_MAX_MS}` })
  bucketMs?: number;
}
