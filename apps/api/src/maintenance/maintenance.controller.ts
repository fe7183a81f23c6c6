import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { Envelope, ErrorEnvelope, ok } from '../common/envelope';
import { CreateMaintenanceDto, DeleteMaintenanceQuery, MaintenanceListResponse, MaintenanceQuery, MaintenanceWindowResponse } from './dto/maintenance.dto';
import { MaintenanceService } from './maintenance.service';
import { MAINTENANCE_RULES, TimerRules } from '../docs/timer-rules';

const FORBIDDEN = { type: ErrorEnvelope, description: 'needs the admin token, or a token of this app (code 40300)' };

@ApiTags('apps')
@ApiAuth()
@Controller('api/app/v1')
export class MaintenanceController {
  constructor(private readonly maintenance: MaintenanceService) {}

  @Post('maintenance')
  @TimerRules(...MAINTENANCE_RULES)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a maintenance window (admin, or a token of the app)',
    description:
      'A fixed window [from, to) or a recurring one (each start of `cron`, in UTC, for `durationMs`), over `timerIds` or every timer of the app. ' +
      'Scheduled fires whose time falls inside are recorded missed: `skipped: maintenance` (`skip`), or `deferred: maintenance, to <end>` with one fire per timer at the window\'s end (`defer`). ' +
      'Run now, replays and backfills are exempt. In force on every executor within about 1 s.',
  })
  @ApiOkResponse({ type: MaintenanceWindowResponse })
  @ApiBadRequestResponse({ type: ErrorEnvelope, description: 'a field is invalid: the message names it (code 40000)' })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'no such app, or a timer of `timerIds` is not one of its live timers (code 40400)' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelope, description: 'Redis or MySQL failed; nothing was changed: retry (code 50300)' })
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateMaintenanceDto): Promise<MaintenanceWindowResponse> {
    return ok({ data: await this.maintenance.create(p, dto) });
  }

  @Get('maintenance')
  @ApiOperation({ summary: 'The app\'s maintenance windows (admin, or a token of the app)' })
  @ApiOkResponse({ type: MaintenanceListResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'no such app (code 40400)' })
  async list(@CurrentPrincipal() p: Principal, @Query() q: MaintenanceQuery): Promise<MaintenanceListResponse> {
    return ok({ data: await this.maintenance.list(p, q.app) });
  }

  @Delete('maintenance')
  @ApiOperation({ summary: 'Delete a maintenance window (admin, or a token of the app)', description: 'Fires from then on are delivered (within about 1 s); fires already deferred stay at the window\'s end.' })
  @ApiOkResponse({ type: Envelope })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'the app has no such window (code 40400)' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelope, description: 'Redis or MySQL failed; nothing was changed: retry (code 50300)' })
  async delete(@CurrentPrincipal() p: Principal, @Query() q: DeleteMaintenanceQuery): Promise<Envelope> {
    await this.maintenance.delete(p, q.app, q.id);
    return ok();
  }
}
