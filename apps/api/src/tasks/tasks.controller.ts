import { Controller, Get, Query } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ErrorEnvelope, ok } from '../common/envelope';
import { RecordsQuery } from './dto/records.query';
import { RecordsResponse } from './dto/task.view';
import { TasksService } from './tasks.service';
import { RECORDS_RULES, TimerRules } from '../docs/timer-rules';

@ApiTags('tasks')
@ApiAuth()
@Controller('api/task/v1')
export class TasksController {
  constructor(private readonly tasks: TasksService) {}

  @Get('records')
  @TimerRules(...RECORDS_RULES)
  @ApiOperation({
    summary: 'Fire records of an app, a timer or a fire (extension)',
    description:
      'Latest run time first; `total` counts all pages. `timerID` (a deleted timer\'s too) or `fireID` narrow it to a timer or a fire; ' +
      'without either, the whole app\'s. `from`/`to` bound `runAt`; future pending fires only with `includePending=true`. ' +
      'Each record carries its `attempts`.',
  })
  @ApiOkResponse({ type: RecordsResponse })
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'no such timer (live or deleted) or fire in this app' })
  async records(@CurrentPrincipal() p: Principal, @Query() q: RecordsQuery): Promise<RecordsResponse> {
    return ok(await this.tasks.records(p, q));
  }
}
