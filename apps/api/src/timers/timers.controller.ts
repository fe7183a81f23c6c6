import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBody, ApiConflictResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { Envelope, ErrorEnvelope, ok } from '../common/envelope';
import { CreateTimerDto } from './dto/create-timer.dto';
import { ListTimersQuery } from './dto/list-timers.query';
import { TimerRefDto } from './dto/timer-ref.dto';
import { CreateTimerResponse, EnableResponse, GetTimerResponse, ListTimersResponse, RunResponse } from './dto/timer.view';
import { TimersService } from './timers.service';

const NOT_FOUND = { type: ErrorEnvelope, description: 'no such live timer in this app (also for another app\'s timer)' };

/** Seed 4.6 routes (create, get, delete, enable, unable) plus list and run-now. */
@ApiTags('timers')
@ApiAuth()
@Controller('api/timer/v1')
export class TimersController {
  constructor(private readonly timers: TimersService) {}

  @Post('def')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a timer (seed 4.6.1)', description: 'Created disabled; enable it to start firing. The admin token creates the app on first use.' })
  @ApiOkResponse({ type: CreateTimerResponse })
  @ApiConflictResponse({ type: ErrorEnvelope, description: 'the app already has a live timer with this name (code 40900)' })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'an app token naming another app (code 40300)' })
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateTimerDto): Promise<CreateTimerResponse> {
    return ok(await this.timers.create(p, dto));
  }

  @Get('def')
  @ApiOperation({ summary: 'Get a timer (seed 4.6.5)', description: 'Includes a preview of the next fire times.' })
  @ApiOkResponse({ type: GetTimerResponse })
  @ApiNotFoundResponse(NOT_FOUND)
  async get(@CurrentPrincipal() p: Principal, @Query() ref: TimerRefDto): Promise<GetTimerResponse> {
    return ok({ data: await this.timers.get(p, ref) });
  }

  @Delete('def')
  @ApiOperation({ summary: 'Delete a timer (seed 4.6.4)', description: 'Soft delete: the name becomes reusable; pending fires are removed from MySQL and Redis.' })
  @ApiBody({ type: TimerRefDto })
  @ApiOkResponse({ type: Envelope })
  @ApiNotFoundResponse(NOT_FOUND)
  async delete(@CurrentPrincipal() p: Principal, @Body() ref: TimerRefDto): Promise<Envelope> {
    await this.timers.delete(p, ref);
    return ok();
  }

  @Post('enable')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Enable a timer (seed 4.6.2)',
    description:
      'Pre-creates the fires of the current and the next two migrator windows (TIMER_WINDOW_MINUTES, UTC-aligned) in MySQL and ' +
      'the Redis slice index. Idempotent: an enabled timer is left as is. A one-shot timer whose time has passed is refused (40003).',
  })
  @ApiBody({ type: TimerRefDto })
  @ApiOkResponse({ type: EnableResponse })
  @ApiNotFoundResponse(NOT_FOUND)
  async enable(@CurrentPrincipal() p: Principal, @Body() ref: TimerRefDto): Promise<EnableResponse> {
    return ok({ data: await this.timers.enable(p, ref) });
  }

  @Post('unable')
  @HttpCode(200)
  @ApiOperation({ summary: 'Disable a timer (seed 4.6.3)', description: 'Pending fires stay; the executor skips fires of a disabled timer.' })
  @ApiBody({ type: TimerRefDto })
  @ApiOkResponse({ type: Envelope })
  @ApiNotFoundResponse(NOT_FOUND)
  async disable(@CurrentPrincipal() p: Principal, @Body() ref: TimerRefDto): Promise<Envelope> {
    await this.timers.disable(p, ref);
    return ok();
  }

  @Get('defs')
  @ApiOperation({ summary: 'List the timers of an app (extension)', description: 'Newest first (id descending); `total` counts all pages.' })
  @ApiOkResponse({ type: ListTimersResponse })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'an app token naming another app (code 40300)' })
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListTimersQuery): Promise<ListTimersResponse> {
    return ok(await this.timers.list(p, q));
  }

  @Post('run')
  @HttpCode(200)
  @ApiOperation({ summary: 'Run an enabled timer now (extension)', description: 'Creates one fire at the current instant and returns its fire id.' })
  @ApiBody({ type: TimerRefDto })
  @ApiOkResponse({ type: RunResponse })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({ type: ErrorEnvelope, description: 'the timer is disabled (code 40900)' })
  async run(@CurrentPrincipal() p: Principal, @Body() ref: TimerRefDto): Promise<RunResponse> {
    return ok({ data: await this.timers.runNow(p, ref) });
  }
}
