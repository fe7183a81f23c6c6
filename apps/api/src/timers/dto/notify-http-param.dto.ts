import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, ValidateBy } from 'class-validator';
import { CALLBACK_TIMEOUT_MIN_MS } from '@timer/platform';
import { HEADER_MAP_SCHEMA, IsCallbackUrl, IsHeaderMap, MAX_URL_LENGTH } from '../../common/validators';

export const CALLBACK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type CallbackMethod = (typeof CALLBACK_METHODS)[number];

/** Largest `timeoutMs` any configuration accepts (TIMER_CALLBACK_TIMEOUT_MAX_MS's own bound); the configured one is checked with the definition. */
export const CALLBACK_TIMEOUT_CAP_MS = 120_000;
export const TIMEOUT_MESSAGE = `timeoutMs must be an integer number of milliseconds from ${CALLBACK_TIMEOUT_MIN_MS} to TIMER_CALLBACK_TIMEOUT_MAX_MS`;

/** The HTTP callback of a timer (seed 4.6.1 `notifyHTTPParam`). */
export class NotifyHttpParamDto {
  @ApiProperty({
    description:
      'Absolute http(s) URL called at every fire. A literal loopback/private/link-local IP (or `localhost`) is refused unless ' +
      'TIMER_CALLBACK_ALLOW_PRIVATE=true; names are not resolved here (the executor checks the resolved address at call time). ' +
      'Credentials (`user:pass@`, give them as a header), control characters (CR, LF, TAB) and port 0 are refused.',
    example: 'https://hooks.example.com/timer',
    maxLength: MAX_URL_LENGTH,
  })
  @IsCallbackUrl()
  url!: string;

  @ApiProperty({ enum: CALLBACK_METHODS, example: 'POST', description: 'Case-insensitive; stored upper-case.' })
  @Transform(({ value }) => (typeof value === 'string' ? value.toUpperCase() : value))
  @IsIn(CALLBACK_METHODS, { message: `method must be one of ${CALLBACK_METHODS.join(', ')}` })
  method!: CallbackMethod;

  @ApiPropertyOptional({
    description:
      'map[string][]string of request headers (a single string is accepted and stored as a one-element array). Names are ' +
      'RFC 7230 tokens; values may not contain CR/LF/control characters; Host, Content-Length, Transfer-Encoding, ' +
      'Connection and X-Timer-* are reserved. A User-Agent given here replaces the service\'s own.',
    ...HEADER_MAP_SCHEMA,
    example: { 'Content-Type': ['application/json'] },
  })
  @IsOptional()
  @IsHeaderMap()
  header?: Record<string, string | string[]>;

  @ApiPropertyOptional({
    description: 'Request body, sent verbatim (not re-encoded). At most TIMER_CALLBACK_BODY_MAX_BYTES (default 65536) UTF-8 bytes.',
    example: '{"orderId":42}',
  })
  @IsOptional()
  @IsString()
  body?: string;

  @ApiPropertyOptional({
    description:
      'Extension: how long each call of this timer may take (connect, headers, body) before it counts as a failed, retryable ' +
      `attempt (\`no answer within <ms> ms\`). From ${CALLBACK_TIMEOUT_MIN_MS} to TIMER_CALLBACK_TIMEOUT_MAX_MS (default 30000); ` +
      'absent: the executor\'s TIMER_CALLBACK_TIMEOUT_MS (default 5000).',
    type: 'integer',
    minimum: CALLBACK_TIMEOUT_MIN_MS,
    maximum: CALLBACK_TIMEOUT_CAP_MS,
    example: 10_000,
  })
  @IsOptional()
  @ValidateBy({
    name: 'isTimeoutMs',
    validator: {
      validate: (v: unknown) => Number.isSafeInteger(v) && (v as number) >= CALLBACK_TIMEOUT_MIN_MS && (v as number) <= CALLBACK_TIMEOUT_CAP_MS,
      defaultMessage: () => TIMEOUT_MESSAGE,
    },
  })
  timeoutMs?: number;

  @ApiPropertyOptional({
    description:
      'Extension: fill `{{placeholder}}`s in `url` (values URL-encoded, not in the host), header values (not names) and `body` per ' +
      'fire: `{{scheduledAt}}` (epoch ms), `{{scheduledAtIso}}`, `{{previousScheduledAt}}` (the previous fire time of the schedule, ' +
      'empty for the first), `{{fireId}}`, `{{attempt}}`, `{{timerId}}`, `{{app}}`. An unknown or malformed placeholder is refused ' +
      '(400 naming the field); there is no escape for a literal `{{`. The signature covers the filled body. Absent or false: sent verbatim.',
    type: 'boolean',
    example: true,
  })
  @IsOptional()
  @IsBoolean()
  template?: boolean;
}
