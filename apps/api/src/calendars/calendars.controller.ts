import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { Envelope, ErrorEnvelope, ok } from '../common/envelope';
import { CalendarsService } from './calendars.service';
import { CalendarAppQuery, CalendarEditResponse, CalendarListResponse, CalendarResponse, CreateCalendarDto, PutCalendarDto } from './dto/calendar.dto';

const FORBIDDEN = { type: ErrorEnvelope, description: 'needs the admin token, or a token of this app (code 40300); a quota reached (code 40301)' };
const NAME = { name: 'name', description: 'the calendar\'s name', example: 'de-holidays' };

@ApiTags('calendars')
@ApiAuth()
@Controller('api/app/v1/calendars')
export class CalendarsController {
  constructor(private readonly calendars: CalendarsService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a calendar of excluded days (admin, or a token of the app)',
    description:
      'Days a timer that refers to the calendar (`calendars`) does not fire on: dates and ranges, public holidays of a country (and region), ISO weekdays. ' +
      'What a fire on such a day does is the timer\'s `onExcluded` (docs/calendars.md).',
  })
  @ApiOkResponse({ type: CalendarResponse })
  @ApiBadRequestResponse({ type: ErrorEnvelope, description: 'a field is invalid: the message names it, e.g. `exclude.holidays[0].country` (code 40001)' })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'no such app (code 40400)' })
  @ApiConflictResponse({ type: ErrorEnvelope, description: 'the app has a calendar of that name (code 40900)' })
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateCalendarDto): Promise<CalendarResponse> {
    return ok({ data: await this.calendars.create(p, dto) });
  }

  @Get()
  @ApiOperation({ operationId: 'listCalendars', summary: 'The app\'s calendars, by name (admin, or a token of the app)' })
  @ApiOkResponse({ type: CalendarListResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  async list(@CurrentPrincipal() p: Principal, @Query() q: CalendarAppQuery): Promise<CalendarListResponse> {
    return ok({ data: await this.calendars.list(p, q.app) });
  }

  @Get(':name')
  @ApiParam(NAME)
  @ApiOperation({ operationId: 'getCalendar', summary: 'One calendar, with the live timers that use it (admin, or a token of the app)' })
  @ApiOkResponse({ type: CalendarResponse })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'the app has no such calendar (code 40400)' })
  async get(@CurrentPrincipal() p: Principal, @Param('name') name: string, @Query() q: CalendarAppQuery): Promise<CalendarResponse> {
    return ok({ data: await this.calendars.get(p, q.app, name) });
  }

  @Put(':name')
  @ApiParam(NAME)
  @ApiOperation({
    operationId: 'putCalendar',
    summary: 'Replace a calendar\'s zone and excluded days (admin, or a token of the app)',
    description: 'The open future fires of the timers that use it are regenerated, as after an edit of those timers: the near future at once, the rest by the migrator.',
  })
  @ApiOkResponse({ type: CalendarEditResponse })
  @ApiBadRequestResponse({ type: ErrorEnvelope, description: 'a field is invalid: the message names it (code 40001)' })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'the app has no such calendar (code 40400)' })
  async put(@CurrentPrincipal() p: Principal, @Param('name') name: string, @Query() q: CalendarAppQuery, @Body() dto: PutCalendarDto): Promise<CalendarEditResponse> {
    return ok({ data: await this.calendars.put(p, q.app, name, dto) });
  }

  @Delete(':name')
  @ApiParam(NAME)
  @ApiOperation({ operationId: 'deleteCalendar', summary: 'Delete a calendar no live timer uses (admin, or a token of the app)' })
  @ApiOkResponse({ type: Envelope })
  @ApiForbiddenResponse(FORBIDDEN)
  @ApiNotFoundResponse({ type: ErrorEnvelope, description: 'the app has no such calendar (code 40400)' })
  @ApiConflictResponse({ type: ErrorEnvelope, description: 'live timers use it: the message names them and `data.timers` lists their ids (code 40900)' })
  async delete(@CurrentPrincipal() p: Principal, @Param('name') name: string, @Query() q: CalendarAppQuery): Promise<Envelope> {
    await this.calendars.delete(p, q.app, name);
    return ok();
  }
}
