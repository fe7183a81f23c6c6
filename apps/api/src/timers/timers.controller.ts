import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Put, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { Envelope, ErrorEnvelope, ok } from '../common/envelope';
import { CreateTimerBatchDto } from './dto/create-batch.dto';
import { CreateTimerDto } from './dto/create-timer.dto';
import { PatchTimerDto, TimerVersionsQuery, UpdateTimerDto } from './dto/edit-timer.dto';
import { ListTimersQuery } from './dto/list-timers.query';
import { TimerRefDto } from './dto/timer-ref.dto';
import {
  BatchCreateResponse,
  CreateTimerResponse,
  DisableResponse,
  EditResponse,
  EnableResponse,
  GetTimerResponse,
  ListTimersResponse,
  RunResponse,
  StaleVersionEnvelope,
  TimerVersionsResponse,
} from './dto/timer.view';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX, IdempotencyKey } from './idempotency-key';
import { TimerEditService } from './timer-edit.service';
import { TimersService } from './timers.service';
import { CREATE_RULES, TimerRules, BATCH_RULES, PATCH_RULES } from '../docs/timer-rules';

const NOT_FOUND = { type: ErrorEnvelope, description: 'no such live timer in this app (also for another app\'s timer)' };
const STALE = { type: StaleVersionEnvelope, description: '`version` is not the current one (code 40901; `data.version` is), or the new name is taken (code 40900)' };
const EDIT_NOTE =
  'Pending fires at or after now that the new schedule does not have are recorded missed ("superseded by version N"), the new ' +
  'schedule\'s fires are created through the prepared migrator windows, in one transaction under the timer\'s row lock; fires ' +
  'already claimed finish as claimed. The executor sees the new callback within TIMER_EXECUTOR_CACHE_TTL_MS.';

/** Seed 4.6 routes (create, get, delete, enable, unable) plus edit, versions, list and run-now. */
@ApiTags('timers')
@ApiAuth()
@Controller('api/timer/v1')
export class TimersController {
  constructor(
    private readonly timers: TimersService,
    private readonly edits: TimerEditService,
  ) {}

  @Post('def')
  @TimerRules(...CREATE_RULES)
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a timer (seed 4.6.1)', description: 'Created disabled; enable it to start firing. The admin token creates the app on first use.' })
  @ApiHeader({
    name: IDEMPOTENCY_KEY_HEADER,
    required: false,
    description:
      `Optional, 1-${IDEMPOTENCY_KEY_MAX} printable ASCII characters, per app, kept at least 24 h: a repeat with the same body answers the first ` +
      'result again (same id, header `Idempotent-Replayed: true`); with another body 422 (code 42200).',
  })
  @ApiOkResponse({ type: CreateTimerResponse })
  @ApiConflictResponse({ type: ErrorEnvelope, description: 'the app already has a live timer with this name (code 40900)' })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'an app token naming another app (code 40300)' })
  @ApiResponse({ status: 422, type: ErrorEnvelope, description: 'the Idempotency-Key was used with another request body (code 42200)' })
  async create(
    @CurrentPrincipal() p: Principal,
    @Body() dto: CreateTimerDto,
    @IdempotencyKey() key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CreateTimerResponse> {
    const { id, version, replayed } = await this.timers.create(p, dto, key);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    return ok({ id, version });
  }

  @Post('def/batch')
  @TimerRules(...BATCH_RULES)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create (and enable) many timers of one app (extension)',
    description:
      'One request and one transaction, all or nothing: each item is checked as its own create (a refusal names it, `timers[3].cron: ...`; ' +
      'a name taken by a live timer 409 naming `timers[i].name`), maxTimers counts the batch, maxFiresPerMinute and admission count the ' +
      'batch\'s fires together. With `enable: true` each timer is as after a create then an enable (versions 1 and 2, fires pre-created). ' +
      'For creating many timers at a high rate: the per-request and per-transaction costs are shared by the batch.',
  })
  @ApiHeader({
    name: IDEMPOTENCY_KEY_HEADER,
    required: false,
    description: 'As on create: a repeat with the same body answers the first result again (`Idempotent-Replayed: true`); with another body 422 (code 42200).',
  })
  @ApiOkResponse({ type: BatchCreateResponse })
  @ApiBadRequestResponse({ type: ErrorEnvelope, description: 'an item refused (the message names it: `timers[i].field: ...`), two items with one name, or more than TIMER_API_BATCH_MAX items (code 40001)' })
  @ApiConflictResponse({ type: ErrorEnvelope, description: 'an item\'s name is taken by a live timer of the app (code 40900; `timers[i].name`)' })
  @ApiForbiddenResponse({ type: ErrorEnvelope, description: 'an app token naming another app (code 40300), or a quota (maxTimers counting the batch, minIntervalMs; code 40301)' })
  @ApiResponse({ status: 422, type: ErrorEnvelope, description: 'the Idempotency-Key was used with another request body (code 42200)' })
  @ApiResponse({ status: 429, type: ErrorEnvelope, description: 'maxFiresPerMinute over the batch\'s fires, or a second over the capacity (admission)' })
  async createBatch(
    @CurrentPrincipal() p: Principal,
    @Body() dto: CreateTimerBatchDto,
    @IdempotencyKey() key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<BatchCreateResponse> {
    const { timers, replayed } = await this.timers.createBatch(p, dto, key);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    return ok({ data: { timers } });
  }

  @Put('def')
  @TimerRules(...CREATE_RULES)
  @ApiOperation({ summary: 'Replace a timer\'s definition (extension)', description: `Every field as in create (the same rules and defaults), plus \`id\` and the current \`version\`. ${EDIT_NOTE}` })
  @ApiOkResponse({ type: EditResponse })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse(STALE)
  async replace(@CurrentPrincipal() p: Principal, @Body() dto: UpdateTimerDto): Promise<EditResponse> {
    return ok({ data: await this.edits.replace(p, dto) });
  }

  @Patch('def')
  @TimerRules(...PATCH_RULES)
  @ApiOperation({
    summary: 'Change some fields of a timer (extension)',
    description:
      '`id`, `app`, the current `version` and only the fields to change, each with the rules of create; `cron` or `runAt` replaces the ' +
      `schedule; \`notifyHTTPParam\` and \`retryPolicy\` are patched field by field (\`header\` or \`body\` null removes it). ${EDIT_NOTE}`,
  })
  @ApiOkResponse({ type: EditResponse })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse(STALE)
  async patch(@CurrentPrincipal() p: Principal, @Body() dto: PatchTimerDto): Promise<EditResponse> {
    return ok({ data: await this.edits.patch(p, dto) });
  }

  @Get('def/versions')
  @ApiOperation({ summary: 'List the versions of a timer (extension)', description: 'Newest first (the first is the current definition), each with the time it was written and the change that made it.' })
  @ApiOkResponse({ type: TimerVersionsResponse })
  @ApiNotFoundResponse(NOT_FOUND)
  async versions(@CurrentPrincipal() p: Principal, @Query() q: TimerVersionsQuery): Promise<TimerVersionsResponse> {
    return ok(await this.edits.list(p, q));
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
  @ApiOperation({ summary: 'Disable a timer (seed 4.6.3)', description: 'Pending fires after now are deleted (MySQL and the slice index; `removedFires`); fires already due are recorded missed by the executor.' })
  @ApiBody({ type: TimerRefDto })
  @ApiOkResponse({ type: DisableResponse })
  @ApiNotFoundResponse(NOT_FOUND)
  async disable(@CurrentPrincipal() p: Principal, @Body() ref: TimerRefDto): Promise<DisableResponse> {
    return ok({ data: await this.timers.disable(p, ref) });
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
