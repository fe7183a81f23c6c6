import { Controller, Get, Query } from '@nestjs/common';
import { ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ErrorEnvelope, ok } from '../common/envelope';
import { OverviewQuery } from './dto/overview.query';
import { OverviewResponse } from './dto/overview.view';
import { OVERVIEW_MAX_BUCKETS, OVERVIEW_MAX_RANGE_MS, OverviewService } from './overview.service';
import { OVERVIEW_RULES, TimerRules } from '../docs/timer-rules';

@ApiTags('apps')
@ApiAuth()
@Controller('api/app/v1')
export class OverviewController {
  constructor(private readonly overview: OverviewService) {}

  @Get('overview')
  @TimerRules(...OVERVIEW_RULES(OVERVIEW_MAX_RANGE_MS, OVERVIEW_MAX_BUCKETS))
  @ApiOperation({
    operationId: 'getOverview',
    summary: 'Fires per second, outcomes, lateness p50/p99 and backlog (an app token: its app; the admin: all apps, or one with `app`)',
    description:
      'Read from the task rows (the ledger), no metrics store: for each bucket of run_at in [from, to) (default the last hour in minutes) the fires and what became of them, ' +
      'the lateness percentiles of the delivered ones (lateness as the executor records it: the delivering attempt\'s start minus the fire\'s run_at plus its jitter), ' +
      'and the backlog: pending fires whose run_at has passed.',
  })
  @ApiOkResponse({ type: OverviewResponse })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'an app token naming another app (code 40300)' })
  async get(@CurrentPrincipal() p: Principal, @Query() q: OverviewQuery): Promise<OverviewResponse> {
    return ok({ data: await this.overview.get(p, q) });
  }
}
