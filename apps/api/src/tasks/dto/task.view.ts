import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FIRE_STATUS_DESCRIPTION, FIRE_STATUS_VALUES } from '@timer/contracts';
import { Envelope } from '../../common/envelope';

/** What the receiver answered one attempt, as the executor keeps it (docs/callback-answers.md). */
export class ResponseView {
  @ApiProperty({ example: 200, description: 'HTTP status answered' })
  status!: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'content-type': 'application/json' },
    description: 'the headers TIMER_RECORD_HEADERS names (lower-case; repeated ones joined with ", "), those the receiver sent',
  })
  headers!: Record<string, string>;

  @ApiProperty({ example: '{"ok":true}', description: 'the first TIMER_RECORD_BODY_BYTES bytes of the body as UTF-8, bytes that are not UTF-8 as U+FFFD' })
  body!: string;

  @ApiProperty({ example: false, description: 'the body was longer than `body` (or not kept: TIMER_RECORD_BODY_BYTES=0)' })
  truncated!: boolean;
}

/** One delivery attempt of a fire. */
export class AttemptView {
  @ApiProperty({ example: 1, description: '1-based (a replayed dead letter starts over at 1)' })
  attempt!: number;

  @ApiProperty({ example: 1767225600012, description: 'when the callback started (epoch ms)' })
  startedAt!: number;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'HTTP status answered; null when none came (timeout, refused connection)' })
  httpStatus!: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'duration of the call (ms)' })
  costMs!: number | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'why it failed (first 256 characters); null on success' })
  error!: string | null;

  @ApiProperty({ type: ResponseView, nullable: true, description: "what the receiver answered; null when no answer came or the executor kept none (TIMER_RECORD_HEADERS, TIMER_RECORD_BODY_BYTES)" })
  response!: ResponseView | null;
}

/** One fire of a timer (a task row). */
export class TaskView {
  @ApiProperty({ example: '42-1767225600000', description: '`<timerId>-<runAtMs>`, as in X-Timer-Fire-Id' })
  fireId!: string;

  @ApiProperty({ example: 42 })
  timerID!: number;

  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({ description: 'scheduled time (epoch ms)' })
  runAt!: number;

  @ApiProperty({ enum: [...FIRE_STATUS_VALUES], description: FIRE_STATUS_DESCRIPTION })
  status!: number;

  @ApiProperty({ description: 'delivery attempts made so far' })
  attempt!: number;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'HTTP status of the last attempt' })
  httpStatus!: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'duration of the last attempt (ms)' })
  costMs!: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'delay between runAt and the first attempt (ms)' })
  latenessMs!: number | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  error!: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'start of the callback response body' })
  output!: string | null;

  @ApiProperty({ example: false, description: 'created by a backfill (POST /api/timer/v1/backfill): delivered on request, however late' })
  backfill!: boolean;

  @ApiProperty({ type: [AttemptView], description: 'every attempt made, oldest first (the latest 32); empty before the first and for a fire never called' })
  attempts!: AttemptView[];
}

export class RecordsResponse extends Envelope {
  @ApiProperty({ type: [TaskView] })
  data!: TaskView[];

  @ApiProperty({ example: 1 })
  total!: number;
}
