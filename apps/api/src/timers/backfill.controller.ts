import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ErrorEnvelope, ok } from '../common/envelope';
import { BackfillService } from './backfill.service';
import { BackfillDto, BackfillResponse } from './dto/backfill.dto';
import { BACKFILL_RULES, TimerRules } from '../docs/timer-rules';

@ApiTags('timers')
@ApiAuth()
@Controller('api/timer/v1')
export class BackfillController {
  constructor(private readonly backfills: BackfillService) {}

  @Post('backfill')
  @TimerRules(...BACKFILL_RULES)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Backfill a past range of an enabled timer (extension)',
    description:
      "Creates the timer's fires in [from, to) (its schedule within its bounds; to <= now) that do not exist yet, marked `backfill: true` in the " +
      'records, and delivers them however late (no misfire or catch-up check), under the overlap policy, with `X-Timer-Backfill: 1`, ' +
      'on the catch-up lane so on-time fires come first. Fires that exist already are left as they are (counted in `existing`). At most ' +
      'TIMER_BACKFILL_MAX_FIRES (default 10,000) fires per call.',
  })
  @ApiOkResponse({ type: BackfillResponse })
  @ApiBadRequestResponse({ type: ErrorEnvelope, description: 'a bad from/to (naming the field), to in the future, or more fires than TIMER_BACKFILL_MAX_FIRES' })
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: "no such live timer in this app (also for another app's timer)" })
  @ApiConflictResponse({ type: ErrorEnvelope, description: 'the timer is not enabled (code 40900)' })
  async backfill(@CurrentPrincipal() p: Principal, @Body() dto: BackfillDto): Promise<BackfillResponse> {
    return ok({ data: await this.backfills.backfill(p, dto) });
  }
}
