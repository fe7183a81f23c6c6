import { Inject, Injectable } from '@nestjs/common';
import { preparedWindows } from '@timer/contracts';
import { AppRepository, CalendarRepository, DuplicateCalendarError, runInTransaction, StoredCalendar, TimerStatus, TimerVersionRepository } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { FireRegenerator, Regeneration } from '@timer/fire';
import { CalendarError, CalendarExclude, CalendarRules, MAX_CALENDAR_DATES_ENTRIES, validateCalendar } from '@timer/schedule';
import { DataSource } from 'typeorm';
import { assertAppAccess, Principal } from '../auth/principal';
import { ApiError, badRequest, conflict, ErrorCode, notFound } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { TimersService } from '../timers/timers.service';
import { CalendarEditView, CalendarView, CreateCalendarDto, PutCalendarDto } from './dto/calendar.dto';

/** Most timers a 409 of a delete names. */
const NAMED_USERS = 20;

/**
 * An app's calendars (docs/calendars.md). A timer keeps a copy of the definitions of the calendars it
 * refers to (`calendar_rules`), so the roles compute its fires from its row alone; editing a calendar
 * rewrites the copies and regenerates the open fires of those timers as a timer edit does.
 */
@Injectable()
export class CalendarsService {
  constructor(
    private readonly config: ApiConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly dataSource: DataSource,
    private readonly calendars: CalendarRepository,
    private readonly apps: AppRepository,
    private readonly timers: TimersService,
    private readonly regenerator: FireRegenerator,
    private readonly versions: TimerVersionRepository,
  ) {}

  async create(p: Principal, dto: CreateCalendarDto): Promise<CalendarView> {
    assertAppAccess(p, dto.app);
    const rules = this.checked(dto.name, dto.timeZone, dto.exclude);
    if (!(await this.apps.find(dto.app))) throw notFound(`app ${dto.app} not found`);
    const { maxCalendars } = this.config.calendarQuota;
    try {
      await runInTransaction(this.dataSource, async (m) => {
        const count = await this.calendars.count(dto.app, m);
        if (maxCalendars > 0 && count >= maxCalendars) {
          throw new ApiError(403, ErrorCode.QUOTA_EXCEEDED, `app ${dto.app} has ${count} calendars, the most it may have (TIMER_QUOTA_MAX_CALENDARS ${maxCalendars}): delete one first`);
        }
        await this.calendars.insert(dto.app, rules, m);
      });
    } catch (e) {
      if (e instanceof DuplicateCalendarError) throw conflict(`app ${dto.app} already has a calendar named ${JSON.stringify(dto.name)}: change it with PUT`);
      throw e;
    }
    return this.get(p, dto.app, dto.name);
  }

  async list(p: Principal, app: string): Promise<CalendarView[]> {
    assertAppAccess(p, app);
    return (await this.calendars.list(app)).map(view);
  }

  async get(p: Principal, app: string, name: string): Promise<CalendarView> {
    assertAppAccess(p, app);
    const c = await this.calendars.find(app, name);
    if (!c) throw notFound(`app ${app} has no calendar named ${JSON.stringify(name)}`);
    return { ...view(c), timers: (await this.calendars.users(app, name)).map((u) => u.id) };
  }

  /**
   * Replaces the calendar's zone and exclusions, rewrites the copy of every timer that uses it (a new
   * version of the timer, change `calendar`) and regenerates their open fires: in the near future at once, later ones dropped for the migrator to
   * write again (as a timer edit does). One transaction: calendar row, then each timer's row.
   */
  async put(p: Principal, app: string, name: string, dto: PutCalendarDto): Promise<CalendarEditView> {
    assertAppAccess(p, app);
    const rules = this.checked(name, dto.timeZone, dto.exclude);
    const now = this.clock.now();
    const until = now + this.config.precreateMs;
    const indexUntilMs = preparedWindows(now, this.config.windowMs).until + this.config.windowMs;
    const regenerations: Regeneration[] = [];
    const regenerated = await runInTransaction(this.dataSource, async (m) => {
      regenerations.length = 0;
      if (!(await this.calendars.find(app, name, m))) throw notFound(`app ${app} has no calendar named ${JSON.stringify(name)}`);
      await this.calendars.update(app, rules, m);
      const users = await this.calendars.users(app, name, m);
      for (const u of users) {
        const locked = await this.timers.lock(m, { app, id: u.id });
        const calendarRules = await this.calendars.rulesOf(app, u.calendars, m);
        await this.calendars.setTimerRules(u.id, calendarRules, m);
        await this.versions.snapshot(u.id, 'calendar', now, m);
        if (locked.status !== TimerStatus.Enabled) continue;
        const timer = { ...locked, calendarRules, version: locked.version + 1 };
        const r = await this.regenerator.regenerate(timer, { fromMs: now, toMs: until, createUntilMs: until, dropAfter: { indexUntilMs } }, m);
        regenerations.push(r);
      }
      return users.length;
    });
    for (const r of regenerations) await this.regenerator.afterCommit(r);
    return { ...(await this.get(p, app, name)), regenerated };
  }

  /** Deletes a calendar no live timer uses; 409 naming the timers otherwise. */
  async delete(p: Principal, app: string, name: string): Promise<void> {
    assertAppAccess(p, app);
    await runInTransaction(this.dataSource, async (m) => {
      if (!(await this.calendars.find(app, name, m))) throw notFound(`app ${app} has no calendar named ${JSON.stringify(name)}`);
      const users = await this.calendars.users(app, name, m);
      if (users.length > 0) {
        const named = users.slice(0, NAMED_USERS).map((u) => `${u.id} (${JSON.stringify(u.name)})`).join(', ');
        throw new ApiError(409, ErrorCode.CONFLICT, `calendar ${JSON.stringify(name)} is used by ${users.length} timer(s): ${named}${users.length > NAMED_USERS ? ', ...' : ''}; remove it from their calendars first`, {}, {
          timers: users.map((u) => u.id),
        });
      }
      await this.calendars.delete(app, name, m);
    });
  }

  /** The calendar as stored, or a 400 naming the field (403 past the dates quota). */
  private checked(name: string, timeZone: string | undefined, exclude: Record<string, unknown>): CalendarRules {
    try {
      validateCalendar(timeZone, exclude);
    } catch (e) {
      if (e instanceof CalendarError) throw badRequest(`${e.field}: ${e.message}`);
      throw e;
    }
    const dates = Array.isArray(exclude.dates) ? exclude.dates.length : 0;
    const maxDates = this.config.calendarQuota.maxDates || MAX_CALENDAR_DATES_ENTRIES;
    if (dates > maxDates) {
      throw new ApiError(403, ErrorCode.QUOTA_EXCEEDED, `exclude.dates: ${dates} entries, more than a calendar may have (TIMER_QUOTA_MAX_CALENDAR_DATES ${maxDates}): use ranges {from, to}`);
    }
    return { name, timeZone: timeZone ?? null, exclude: exclude as CalendarExclude };
  }
}

function view(c: StoredCalendar): CalendarView {
  return { app: c.app, name: c.name, timeZone: c.timeZone, exclude: c.exclude, createdAt: c.createdAt, updatedAt: c.updatedAt };
}

