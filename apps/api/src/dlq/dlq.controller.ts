import { Body, Controller, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ErrorEnvelope, ok } from '../common/envelope';
import { DeadLettersService } from './dlq.service';
import { DeadLetterSelectionDto, DeadLettersQuery, DeadLettersResponse, FailureWebhookResponse, PurgeResponse, REPLAY_MAX, ReplayResponse, SetFailureWebhookDto } from './dto/dlq.dto';
import { DEAD_LETTER_RULES, TimerRules, WEBHOOK_RULES } from '../docs/timer-rules';

const FORBIDDEN = { type: ErrorEnvelope, description: 'needs the admin token, or a token of this app (code 40300)' };
const NO_APP = { type: ErrorEnvelope, description: 'no such app (code 40400)' };
const SELECTOR = { type: ErrorEnvelope, description: 'none or several of fireIds, timerId, all; or one of them invalid (code 40001, naming the field)' };

/** An app's dead letters and its failure webhook (docs/behaviour.md, "Dead letters", "Failure notifications"). */
@ApiTags('apps')
@ApiAuth()
@Controller('api/app/v1')
export class DeadLettersController {
  constructor(private readonly letters: DeadLettersService) {}

  @Get('dlq')
  @ApiOperation({
    summary: 'The app\'s dead letters (admin, or a token of the app)',
    description: 'Fires that failed for good (attempts exhausted, or a failure that cannot heal), latest run time first; `total` counts all pages. A replayed or purged fire leaves the list.',
  })
  @ApiOkResponse({ type: DeadLettersResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  async list(@CurrentPrincipal() p: Principal, @Query() q: DeadLettersQuery): Promise<DeadLettersResponse> {
    return ok(await this.letters.list(p, q.app, { page: q.pageIndex, size: q.pageSize }));
  }

  @Post('dlq/replay')
  @TimerRules(...DEAD_LETTER_RULES)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Re-deliver dead letters (admin, or a token of the app)',
    description:
      `Exactly one of \`fireIds\`, \`timerId\`, \`all\`. Each selected fire is delivered once more, as a first attempt under its retry policy, however late ` +
      `(a replay that fails again becomes a dead letter again). At most ${REPLAY_MAX} a request: \`remaining\` says how many the selector still holds.`,
  })
  @ApiOkResponse({ type: ReplayResponse })
  @ApiBadRequestResponse(SELECTOR)
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  @ApiServiceUnavailableResponse({ type: ErrorEnvelope, description: 'the broker refused a task message; the fires not published are dead letters again: retry (code 50300)' })
  async replay(@CurrentPrincipal() p: Principal, @Body() dto: DeadLetterSelectionDto): Promise<ReplayResponse> {
    return ok({ data: await this.letters.replay(p, dto) });
  }

  @Post('dlq/purge')
  @TimerRules(...DEAD_LETTER_RULES)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Remove dead letters from the list (admin, or a token of the app)',
    description: 'Exactly one of `fireIds`, `timerId`, `all`. The fires\' failed records stay (records, accounting); they are no longer listed nor replayable here.',
  })
  @ApiOkResponse({ type: PurgeResponse })
  @ApiBadRequestResponse(SELECTOR)
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  async purge(@CurrentPrincipal() p: Principal, @Body() dto: DeadLetterSelectionDto): Promise<PurgeResponse> {
    return ok({ data: await this.letters.purge(p, dto) });
  }

  @Put('failure-webhook')
  @TimerRules(...WEBHOOK_RULES)
  @ApiOperation({
    summary: 'Set or remove the app\'s failure webhook (admin, or a token of the app)',
    description:
      'Every dead-lettered fire of the app is POSTed there (batched: up to 100 a POST), signed with the app\'s signing secret like callbacks ' +
      '(`X-Timer-Signature`), retried with backoff. `failureWebhook: null` removes it.',
  })
  @ApiOkResponse({ type: FailureWebhookResponse })
  @ApiBadRequestResponse({ type: ErrorEnvelope, description: 'an invalid or private URL, or invalid headers (code 40001, naming the field)' })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse(NO_APP)
  async setFailureWebhook(@CurrentPrincipal() p: Principal, @Body() dto: SetFailureWebhookDto): Promise<FailureWebhookResponse> {
    return ok({ data: await this.letters.setFailureWebhook(p, dto.app, dto.failureWebhook) });
  }
}
