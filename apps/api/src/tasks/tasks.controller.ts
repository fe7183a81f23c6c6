import { Controller, Get, Query } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ErrorEnvelope, ok } from '../common/envelope';
import { RecordsQuery } from './dto/records.query';
import { RecordsResponse } from './dto/task.view';
import { TasksService } from './tasks.service';

@ApiTags('tasks')
@ApiAuth()
@Controller('api/task/v1')
export class TasksController {
  constructor(private readonly tasks: TasksService) {}

  @Get('records')
  @ApiOperation({ summary: 'Fire records of a timer (extension)', description: 'Latest run time first; `total` counts all pages.' })
  @ApiOkResponse({ type: RecordsResponse })
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'no such live timer in this app' })
  async records(@CurrentPrincipal() p: Principal, @Query() q: RecordsQuery): Promise<RecordsResponse> {
    return ok(await this.tasks.records(p, q));
  }
}
