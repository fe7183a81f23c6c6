import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { Envelope, ErrorEnvelope, ok } from '../common/envelope';
import {
  AppNameDto,
  AppResponse,
  AppsResponse,
  IssueTokenDto,
  ListAppsQuery,
  ListTokensQuery,
  PauseResponse,
  RevokeTokenDto,
  RotateSecretDto,
  SecretResponse,
  TokenResponse,
  TokensResponse,
} from './dto/app.dto';
import { AppsService } from './apps.service';

const FORBIDDEN = { type: ErrorEnvelope, description: 'needs the admin token, or a token of this app (code 40300)' };
const NO_APP = { type: ErrorEnvelope, description: 'no such app (code 40400)' };
const UNAVAILABLE = { type: ErrorEnvelope, description: 'Redis or MySQL failed; nothing was changed: retry after `Retry-After` (code 50300)' };

@ApiTags('apps')
@ApiAuth()
@Controller('api/app/v1')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Post('apps')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create an app (admin)' })
  @ApiOkResponse({ type: AppResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiConflictResponse({ type: ErrorEnvelope, description: 'the app exists (code 40900)' })
  async create(@CurrentPrincipal() p: Principal, @Body() dto: AppNameDto): Promise<AppResponse> {
    return ok({ data: await this.apps.create(p, dto.app) });
  }

  @Get('apps')
  @ApiOperation({ summary: 'List the apps (admin)', description: 'By name; each with its live timers, live tokens and whether it is paused. No secret is listed.' })
  @ApiOkResponse({ type: AppsResponse })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'needs the admin token (code 40300)' })
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListAppsQuery): Promise<AppsResponse> {
    return ok(await this.apps.list(p, q.pageIndex, q.pageSize));
  }

  @Get('tokens')
  @ApiOperation({
    summary: 'List an app\'s tokens (admin, or a token of the app)',
    description: 'Newest first: id, label, issued and revoked times. Never the token or its hash: a token is shown once, when issued.',
  })
  @ApiOkResponse({ type: TokensResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  async tokens(@CurrentPrincipal() p: Principal, @Query() q: ListTokensQuery): Promise<TokensResponse> {
    return ok(await this.apps.listTokens(p, q.app, q.includeRevoked));
  }

  @Post('tokens')
  @HttpCode(200)
  @ApiOperation({ summary: 'Issue an app token (admin)', description: 'The token is returned once; only its hash is stored.' })
  @ApiOkResponse({ type: TokenResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  async issue(@CurrentPrincipal() p: Principal, @Body() dto: IssueTokenDto): Promise<TokenResponse> {
    return ok({ data: await this.apps.issueToken(p, dto.app, dto.label) });
  }

  @Delete('tokens')
  @ApiOperation({ summary: 'Revoke an app token (admin, or a token of the app)' })
  @ApiOkResponse({ type: Envelope })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'no such app or live token (code 40400)' })
  async revoke(@CurrentPrincipal() p: Principal, @Body() dto: RevokeTokenDto): Promise<Envelope> {
    await this.apps.revokeToken(p, dto.app, dto.tokenId);
    return ok();
  }

  @Post('secret')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Rotate the app\'s callback signing secret (admin, or a token of the app)',
    description: 'Returned once. The replaced secret keeps signing for `overlapSeconds` (default a day), beside the new one.',
  })
  @ApiOkResponse({ type: SecretResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  async rotate(@CurrentPrincipal() p: Principal, @Body() dto: RotateSecretDto): Promise<SecretResponse> {
    return ok({ data: await this.apps.rotateSecret(p, dto.app, dto.overlapSeconds) });
  }

  @Post('pause')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Pause every timer of the app (admin, or a token of the app)',
    description: 'Fires from the answer on are not delivered (within 2 s); they are recorded missed with the reason `paused`. Idempotent: pausing a paused app answers `changed: false`.',
  })
  @ApiOkResponse({ type: PauseResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  @ApiServiceUnavailableResponse(UNAVAILABLE)
  async pause(@CurrentPrincipal() p: Principal, @Body() dto: AppNameDto): Promise<PauseResponse> {
    return ok({ data: await this.apps.pause(p, dto.app) });
  }

  @Post('resume')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Resume the app\'s timers (admin, or a token of the app)',
    description: 'Fires from `resumedAt` (the answer + 2 s) on are delivered; the paused interval\'s fires are recorded missed (reason `paused`), none is delivered late. Idempotent.',
  })
  @ApiOkResponse({ type: PauseResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  @ApiServiceUnavailableResponse(UNAVAILABLE)
  async resume(@CurrentPrincipal() p: Principal, @Body() dto: AppNameDto): Promise<PauseResponse> {
    return ok({ data: await this.apps.resume(p, dto.app) });
  }
}
