import { ApiProperty } from '@nestjs/swagger';

/** Every answer of the API: `code` 0 on success, non-zero with a message naming the problem otherwise. */
export class Envelope {
  @ApiProperty({ example: 0, description: '0 on success; otherwise the error code (HTTP status x 100 + detail)' })
  code!: number;

  @ApiProperty({ example: 'ok' })
  msg!: string;
}

export class ErrorEnvelope extends Envelope {
  @ApiProperty({ example: 40001 })
  declare code: number;

  @ApiProperty({ example: 'notifyHTTPParam.url must be an absolute http or https URL' })
  declare msg: string;

  @ApiProperty({ description: 'correlation id, also in the X-Request-Id header and the server log', example: 'b3c1e0a2f4d54c3e' })
  requestId!: string;
}

export function ok<T extends object>(extra?: T): { code: 0; msg: 'ok' } & T {
  return { code: 0, msg: 'ok', ...(extra as T) };
}
