import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ErrorEnvelope, ok } from '../common/envelope';
import { LoadQuery, LoadResponse, PutQuotaDto, QuotaQuery, QuotaResponse } from './dto/quota.dto';
import { LOAD_MAX_SPAN_MS, QuotaService } from './quota.service';
import { LOAD_RULES, TimerRules } from '../docs/timer-rules';

const NO_APP = { type: ErrorEnvelope, description: 'no such app (code 40400)' };

@ApiTags('apps')
@ApiAuth()
@Controller('api/app/v1')
export class QuotasController {
  constructor(private readonly quotas: QuotaService) {}

  @Put('quota')
  @ApiOperation({
    summary: 'Set an app\'s quotas (admin)',
    description:
      'Replaces the app\'s quotas: each field left out or null is the default (TIMER_QUOTA_*), 0 is no limit. Enforced on create, PUT/PATCH and enable: ' +
      'maxTimers and minIntervalMs answer 403 (code 40301), maxFiresPerMinute 429 (code 42902), with the quota, its value and the usage in the message; nothing is written.',
  })
  @ApiOkResponse({ type: QuotaResponse })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'needs the admin token (code 40300)' })
  @ApiNotFoundResponse(NO_APP)
  async put(@CurrentPrincipal() p: Principal, @Body() dto: PutQuotaDto): Promise<QuotaResponse> {
    return ok({ data: await this.quotas.put(p, dto) });
  }

  @Get('quota')
  @ApiOperation({ summary: 'An app\'s quotas and usage (admin, or a token of the app)' })
  @ApiOkResponse({ type: QuotaResponse })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'needs the admin token, or a token of this app (code 40300)' })
  @ApiNotFoundResponse(NO_APP)
  async get(@CurrentPrincipal() p: Principal, @Query() q: QuotaQuery): Promise<QuotaResponse> {
    return ok({ data: await this.quotas.get(p, q.app) });
  }

  @Get('load')
  @TimerRules(...LOAD_RULES(LOAD_MAX_SPAN_MS))
  @ApiOperation({
    summary: 'Projected fires per second (an app token: its app; the admin: all apps, or one with `app`)',
    description:
      'Pending fires of each second of [from, to) (at most 3600 s), each counted where it is delivered (run_at plus its timer\'s spreadOffsetMs under autoSpread), ' +
      'and the capacity admission control checks against (TIMER_CAPACITY_FIRES_PER_SEC).',
  })
  @ApiOkResponse({ type: LoadResponse })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'an app token naming another app (code 40300)' })
  async load(@CurrentPrincipal() p: Principal, @Query() q: LoadQuery): Promise<LoadResponse> {
    return ok({ data: await this.quotas.load(p, q) });
  }
}
