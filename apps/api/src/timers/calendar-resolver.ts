import { Injectable } from '@nestjs/common';
import { CalendarRepository } from '@timer/dal';
import { CalendarRules } from '@timer/schedule';
import { ValidateBy } from 'class-validator';
import { EntityManager } from 'typeorm';
import { badRequest } from '../common/errors';

/** Most calendars one timer may refer to. */
export const MAX_TIMER_CALENDARS = 10;
/** A calendar's name: as an app's. */
export const CALENDAR_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Every element a calendar name (`calendars` of a timer or a preview). */
export const IsCalendarNames = (): PropertyDecorator =>
  ValidateBy({
    name: 'isCalendarNames',
    validator: {
      validate: (v: unknown) => Array.isArray(v) && v.every((n) => typeof n === 'string' && CALENDAR_NAME.test(n)),
      defaultMessage: () => 'calendars must hold calendar names: 1 to 64 characters, letters, digits, _ . - (not first)',
    },
  });

/** The calendars a timer definition names, as their definitions (docs/calendars.md). */
@Injectable()
export class CalendarResolver {
  constructor(private readonly calendars: CalendarRepository) {}

  /**
   * The definitions of the calendars a timer refers to, in its order: 400 naming `calendars` when one
   * is not a calendar of the app, is given twice, or there are too many. Null for none.
   */
  async resolve(app: string, names: readonly string[] | null | undefined, manager?: EntityManager): Promise<CalendarRules[] | null> {
    if (!names || names.length === 0) return null;
    if (names.length > MAX_TIMER_CALENDARS) throw badRequest(`calendars: at most ${MAX_TIMER_CALENDARS} calendars per timer; got ${names.length}`);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) throw badRequest(`calendars: ${JSON.stringify(twice)} is given twice`);
    const rules = await this.calendars.rulesOf(app, names, manager);
    const missing = names.filter((n) => !rules.some((r) => r.name === n));
    if (missing.length > 0) throw badRequest(`calendars: app ${app} has no calendar named ${missing.map((n) => JSON.stringify(n)).join(', ')} (create it with POST /api/app/v1/calendars)`);
    return rules;
  }
}
