import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { IsCallbackUrl, IsHeaderMap, MAX_URL_LENGTH } from '../../common/validators';

export const CALLBACK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type CallbackMethod = (typeof CALLBACK_METHODS)[number];

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
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
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
}
