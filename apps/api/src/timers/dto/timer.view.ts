import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Envelope } from '../../common/envelope';
import { CALLBACK_METHODS } from './notify-http-param.dto';
import { MISFIRE_POLICIES } from './create-timer.dto';

export class NotifyHttpParamView {
  @ApiProperty({ example: 'https://hooks.example.com/timer' })
  url!: string;

  @ApiProperty({ enum: CALLBACK_METHODS })
  method!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } })
  header?: Record<string, string[]>;

  @ApiPropertyOptional()
  body?: string;
}

export class RetryPolicyView {
  @ApiProperty({ example: 3 })
  maxAttempts!: number;

  @ApiProperty({ example: 1000 })
  backoffMs!: number;
}

/** A timer as the API shows it (seed 4.6.5 `data`, plus the extensions). */
export class TimerView {
  @ApiProperty({ example: 42 })
  id!: number;

  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({ example: 'daily-report' })
  name!: string;

  @ApiProperty({ nullable: true, type: String, example: '0 0 9 * * *', description: 'null for a one-shot timer' })
  cron!: string | null;

  @ApiProperty({ nullable: true, type: Number, description: 'one-shot fire time (epoch ms); null for a cron timer' })
  runAt!: number | null;

  @ApiProperty({ example: 'UTC' })
  timeZone!: string;

  @ApiProperty({ type: NotifyHttpParamView })
  notifyHTTPParam!: NotifyHttpParamView;

  @ApiProperty({ enum: [1, 2], description: '1 = disabled (the seed\'s "unabled"), 2 = enabled' })
  status!: number;

  @ApiProperty({ type: RetryPolicyView })
  retryPolicy!: RetryPolicyView;

  @ApiProperty({ enum: MISFIRE_POLICIES })
  misfirePolicy!: string;

  @ApiProperty({ description: 'creation time (epoch ms)' })
  createdAt!: number;

  @ApiPropertyOptional({
    type: [Number],
    description: 'GET only: the next fire times (epoch ms, ascending) after now, whatever the status; at most TIMER_PREVIEW_COUNT.',
  })
  nextFireTimes?: number[];
}

export class CreateTimerResponse extends Envelope {
  @ApiProperty({ example: 42, description: 'id of the new timer (created disabled: enable it to start firing)' })
  id!: number;
}

export class GetTimerResponse extends Envelope {
  @ApiProperty({ type: TimerView })
  data!: TimerView;
}

export class ListTimersResponse extends Envelope {
  @ApiProperty({ type: [TimerView] })
  data!: TimerView[];

  @ApiProperty({ example: 1, description: 'number of timers matching the filter (all pages)' })
  total!: number;
}

export class EnableResult {
  @ApiProperty({ description: 'false when the timer was already enabled (nothing was done)' })
  changed!: boolean;

  @ApiProperty({ description: 'fires pre-created in [now, end of the next two migrator windows)' })
  fires!: number;

  @ApiProperty({ description: 'end of the pre-created range (epoch ms, exclusive)' })
  until!: number;
}

export class EnableResponse extends Envelope {
  @ApiProperty({ type: EnableResult })
  data!: EnableResult;
}

export class RunResult {
  @ApiProperty({ example: '42-1767225600000', description: '`<timerId>-<runAtMs>`, the X-Timer-Fire-Id of the delivery' })
  fireId!: string;

  @ApiProperty({ example: 1767225600000 })
  runAt!: number;
}

export class RunResponse extends Envelope {
  @ApiProperty({ type: RunResult })
  data!: RunResult;
}
