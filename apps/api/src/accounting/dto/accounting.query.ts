import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { IsAppName, toQueryInteger } from '../../common/validators';
import { MAX_EPOCH_MS } from '../../timers/dto/create-timer.dto';


/** An optional epoch-ms query parameter; messages name `field`. */
export function OptionalEpochMs(field: string, description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ description }),
    IsOptional(),
    Transform(toQueryInteger),
    IsInt({ message: `${field} must be epoch milliseconds (an integer)` }),
    Min(0, { message: `${field} must be epoch milliseconds (an integer >= 0)` }),
    Max(MAX_EPOCH_MS, { message: `${field} must be before the year 10000` }),
  );
}

/** `GET /api/app/v1/accounting`: an app's fires per window in [from, to). */
export class AccountingQuery {
  @ApiProperty({ example: 'billing' })
  @IsAppName()
  app!: string;

  @OptionalEpochMs('from', 'Epoch ms; default: 24 hours before `to`. Rounded down to a window start.')
  from?: number;

  @OptionalEpochMs('to', 'Epoch ms, exclusive; default: the end of the current window. Rounded up to a window end.')
  to?: number;
}
