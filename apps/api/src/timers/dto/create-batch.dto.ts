import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMinSize, IsArray, IsBoolean, IsObject, IsOptional } from 'class-validator';
import { IsAppName, APP_NAME } from '../../common/validators';
import { CreateTimerDto } from './create-timer.dto';

/** `POST /api/timer/v1/def/batch`: timers of one app created (and enabled) in one transaction. */
export class CreateTimerBatchDto {
  @ApiProperty({ description: 'Application every timer of the batch belongs to.', example: 'billing', pattern: APP_NAME.source })
  @IsAppName()
  app!: string;

  @ApiPropertyOptional({ description: 'Enable every timer as `POST enable` does (fires pre-created); default false (created disabled).', default: false })
  @IsOptional()
  @IsBoolean()
  enable?: boolean;

  @ApiProperty({
    type: [CreateTimerDto],
    description:
      'The timers, 1 to TIMER_API_BATCH_MAX (default 500), each a create body (the same fields, rules and defaults) whose `app` is ' +
      'left out or equal to the batch\'s; names distinct. Each item is checked as its own create, a refusal naming it (`timers[3].cron: ...`).',
  })
  @IsArray()
  @ArrayMinSize(1, { message: 'timers must hold at least 1 timer' })
  @IsObject({ each: true, message: 'timers: each item must be an object (a create body)' })
  timers!: Record<string, unknown>[];
}
