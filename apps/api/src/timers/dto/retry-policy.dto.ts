import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 1000;

/** How often the executor tries one fire and how long it waits between tries (doubling per attempt). */
export class RetryPolicyDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 10, default: DEFAULT_MAX_ATTEMPTS, description: 'Attempts per fire, first one included.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10)
  maxAttempts?: number;

  @ApiPropertyOptional({ minimum: 100, maximum: 3_600_000, default: DEFAULT_BACKOFF_MS, description: 'Delay before the second attempt (ms).' })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  backoffMs?: number;
}
