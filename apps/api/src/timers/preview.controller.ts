import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ok } from '../common/envelope';
import { PreviewQuery, PreviewResponse } from './dto/preview.query';
import { PreviewService } from './preview.service';
import { PREVIEW_RULES, TimerRules } from '../docs/timer-rules';

/** `GET /api/timer/v1/preview`: fire times of a schedule without creating anything. */
@ApiTags('timers')
@ApiAuth()
@Controller('api/timer/v1')
export class PreviewController {
  constructor(private readonly previews: PreviewService) {}

  @Get('preview')
  @TimerRules(...PREVIEW_RULES)
  @ApiOperation({
    summary: 'Preview the fire times of a schedule (extension)',
    description:
      'Up to 1,000 fire times from `from` of `cron`, `runAt` or `every` with the fields and rules of create (400 naming the field), ' +
      'each with its UTC and local time and a `dst` flag where a DST change moved, doubled or took away a fire. With `app` and `calendars`, ' +
      'the app\'s calendars are applied as `onExcluded` says and excluded and moved fires are marked (a token of the app). Any valid token ' +
      'otherwise; nothing is written.',
  })
  @ApiOkResponse({ type: PreviewResponse })
  async preview(@CurrentPrincipal() p: Principal, @Query() q: PreviewQuery): Promise<PreviewResponse> {
    return ok({ data: await this.previews.preview(p, q) });
  }
}
