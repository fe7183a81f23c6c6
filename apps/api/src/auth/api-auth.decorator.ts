import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTooManyRequestsResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorEnvelope } from '../common/envelope';
import { AuthGuard } from './auth.guard';

/** Bearer authentication, the failed-authentication limit and the per-app rate limit, with their OpenAPI description. */
export function ApiAuth(): ClassDecorator {
  return applyDecorators(
    UseGuards(AuthGuard),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({ type: ErrorEnvelope, description: 'missing, malformed, invalid or revoked token (code 40100)' }),
    ApiTooManyRequestsResponse({
      type: ErrorEnvelope,
      description: 'per-app rate limit exceeded (code 42900), or too many failed authentications from this address (code 42901); Retry-After header',
    }),
    ApiResponse({ status: 400, type: ErrorEnvelope, description: 'invalid input, naming the field (code 4000x); nothing was written' }),
    ApiResponse({ status: 500, type: ErrorEnvelope, description: 'internal error; only a correlation id is returned (code 50000)' }),
  ) as ClassDecorator;
}
