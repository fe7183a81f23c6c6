import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateBy } from 'class-validator';
import { Envelope } from '../../common/envelope';
import { ISO_INSTANT_PATTERN } from '../../common/validators';
import { instantMessage, isEpochMs, MAX_EPOCH_MS, parseRunAt } from './create-timer.dto';
import { TimerRefDto } from './timer-ref.dto';

const INSTANT = [
  { type: 'integer', minimum: 0, maximum: MAX_EPOCH_MS, example: 1767225600000 },
  { type: 'string', format: 'date-time', pattern: ISO_INSTANT_PATTERN, example: '2026-01-01T00:00:00Z' },
];

/** `POST /api/timer/v1/backfill`: the timer and the past range [from, to) whose fires to create and deliver. */
export class BackfillDto extends TimerRefDto {
  @ApiProperty({ description: 'Start of the range (inclusive), epoch ms or ISO 8601 with `Z`/offset.', oneOf: INSTANT })
  @Transform(parseRunAt)
  @ValidateBy({ name: 'isFrom', validator: { validate: isEpochMs, defaultMessage: (args) => instantMessage('from', args?.value) } })
  from!: number;

  @ApiProperty({ description: 'End of the range (exclusive), at most now; epoch ms or ISO 8601 with `Z`/offset.', oneOf: INSTANT })
  @Transform(parseRunAt)
  @ValidateBy({ name: 'isTo', validator: { validate: isEpochMs, defaultMessage: (args) => instantMessage('to', args?.value) } })
  to!: number;
}

export class BackfillResult {
  @ApiProperty({ example: 60, description: "the timer's fire instants in [from, to) (its schedule within its bounds)" })
  fires!: number;

  @ApiProperty({ example: 58, description: 'fires created by this backfill (marked `backfill: true` in the records) and published' })
  created!: number;

  @ApiProperty({ example: 2, description: 'fires that existed already (delivered, pending or settled otherwise): left as they are, never created twice' })
  existing!: number;

  @ApiProperty({ example: 58, description: 'task messages published now; the others (a broker hiccup) are re-published by the reconciler' })
  published!: number;
}

export class BackfillResponse extends Envelope {
  @ApiProperty({ type: BackfillResult })
  data!: BackfillResult;
}
