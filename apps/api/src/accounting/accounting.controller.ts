import { Controller, Get, Query } from '@nestjs/common';
import { ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ErrorEnvelope, ok } from '../common/envelope';
import { AccountingService, MAX_ACCOUNTING_RANGE_MS } from './accounting.service';
import { AccountingQuery } from './dto/accounting.query';
import { AccountingResponse } from './dto/accounting.view';
import { ACCOUNTING_RULES, TimerRules } from '../docs/timer-rules';

@ApiTags('apps')
@ApiAuth()
@Controller('api/app/v1')
export class AccountingController {
  constructor(private readonly accounting: AccountingService) {}

  @Get('accounting')
  @TimerRules(...ACCOUNTING_RULES(MAX_ACCOUNTING_RANGE_MS))
  @ApiOperation({
    summary: 'Expected versus settled fires of an app, per window',
    description:
      'For each window (TIMER_WINDOW_MINUTES) in [from, to): the fires that exist, how many were delivered, failed or recorded missed, and how many are still open. A finished window with open fires is what the `timer_unsettled_fires_finished_windows` metric counts.',
  })
  @ApiOkResponse({ type: AccountingResponse })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'needs the admin token, or a token of this app (code 40300)' })
  async get(@CurrentPrincipal() p: Principal, @Query() q: AccountingQuery): Promise<AccountingResponse> {
    return ok({ data: await this.accounting.accounting(p, q) });
  }
}
