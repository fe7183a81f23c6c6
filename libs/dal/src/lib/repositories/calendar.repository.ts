import { Injectable } from '@nestjs/common';
import type { CalendarExclude, CalendarRules } from '@timer/schedule';
import { DataSource, EntityManager } from 'typeorm';
import { isDuplicateKeyError } from '../errors';
import { affectedRows, isId, managerOf } from './query-helpers';

/** A stored calendar of an app. */
export interface StoredCalendar extends CalendarRules {
  app: string;
  createdAt: number;
  updatedAt: number;
}

/** A live timer that refers to a calendar. */
export interface CalendarUser {
  id: string;
  name: string;
  calendars: string[];
}

/** The app already has a calendar of that name. */
export class DuplicateCalendarError extends Error {
  constructor(
    readonly app: string,
    readonly calendar: string,
  ) {
    super(`app ${app} already has a calendar named ${calendar}`);
    this.name = 'DuplicateCalendarError';
  }
}

interface Row {
  app: string;
  name: string;
  time_zone: string | null;
  exclude: string | CalendarExclude;
  created_at: Date;
  updated_at: Date;
}

const parse = <T>(v: string | T): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

/** `calendars`: an app's named calendars of excluded days (docs/calendars.md). */
@Injectable()
export class CalendarRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Inserts a calendar; throws {@link DuplicateCalendarError} when the app has one of that name. */
  async insert(app: string, c: CalendarRules, manager?: EntityManager): Promise<void> {
    try {
      await managerOf(this.dataSource, manager).query('INSERT INTO calendars (app, name, time_zone, exclude) VALUES (?, ?, ?, ?)', [app, c.name, c.timeZone, JSON.stringify(c.exclude)]);
    } catch (e) {
      if (isDuplicateKeyError(e)) throw new DuplicateCalendarError(app, c.name);
      throw e;
    }
  }

  /** Replaces a calendar's zone and exclusions; false when the app has no such calendar. */
  async update(app: string, c: CalendarRules, manager?: EntityManager): Promise<boolean> {
    const r = await managerOf(this.dataSource, manager).query('UPDATE calendars SET time_zone = ?, exclude = ? WHERE app = ? AND name = ?', [c.timeZone, JSON.stringify(c.exclude), app, c.name]);
    return affectedRows(r) > 0;
  }

  /** The app's calendar of that name, locked FOR UPDATE inside a transaction; null when there is none. */
  async find(app: string, name: string, manager?: EntityManager): Promise<StoredCalendar | null> {
    const lock = manager ? ' FOR UPDATE' : '';
    const rows = (await managerOf(this.dataSource, manager).query(`SELECT * FROM calendars WHERE app = ? AND name = ?${lock}`, [app, name])) as Row[];
    return rows.length > 0 ? toCalendar(rows[0]) : null;
  }

  /** The app's calendars, by name. */
  async list(app: string, manager?: EntityManager): Promise<StoredCalendar[]> {
    const rows = (await managerOf(this.dataSource, manager).query('SELECT * FROM calendars WHERE app = ? ORDER BY name', [app])) as Row[];
    return rows.map(toCalendar);
  }

  /** Those of `names` the app has, in the order of `names` (the ones it lacks are left out). */
  async rulesOf(app: string, names: readonly string[], manager?: EntityManager): Promise<CalendarRules[]> {
    if (names.length === 0) return [];
    const rows = (await managerOf(this.dataSource, manager).query(`SELECT * FROM calendars WHERE app = ? AND name IN (${names.map(() => '?').join(', ')})`, [app, ...names])) as Row[];
    const byName = new Map(rows.map((r) => [r.name, toCalendar(r)]));
    return names.flatMap((n) => {
      const c = byName.get(n);
      return c ? [{ name: c.name, timeZone: c.timeZone, exclude: c.exclude }] : [];
    });
  }

  /** How many calendars the app has; inside a transaction the app's range of the index is locked, so concurrent creates count one at a time. */
  async count(app: string, manager?: EntityManager): Promise<number> {
    const lock = manager ? ' FOR UPDATE' : '';
    const [r] = (await managerOf(this.dataSource, manager).query(`SELECT COUNT(*) AS n FROM calendars WHERE app = ?${lock}`, [app])) as { n: string | number }[];
    return Number(r.n);
  }

  /** Deletes a calendar; false when the app has no such calendar. */
  async delete(app: string, name: string, manager?: EntityManager): Promise<boolean> {
    return affectedRows(await managerOf(this.dataSource, manager).query('DELETE FROM calendars WHERE app = ? AND name = ?', [app, name])) > 0;
  }

  /** The app's live timers that refer to the calendar, by id. */
  async users(app: string, name: string, manager?: EntityManager): Promise<CalendarUser[]> {
    const rows = (await managerOf(this.dataSource, manager).query(
      'SELECT id, name, calendars FROM timers WHERE app = ? AND deleted_at IS NULL AND calendars IS NOT NULL AND JSON_CONTAINS(calendars, JSON_QUOTE(?)) ORDER BY id',
      [app, name],
    )) as { id: string | number; name: string; calendars: string | string[] }[];
    return rows.map((r) => ({ id: String(r.id), name: r.name, calendars: parse<string[]>(r.calendars) }));
  }

  /**
   * Rewrites a live timer's copy of its calendars' definitions and bumps its version: the fires it
   * computes changed, and the migrator's fence (FireRegenerator.recheck) and the executors' caches
   * compare the version.
   */
  async setTimerRules(timerId: string, rules: CalendarRules[], manager: EntityManager): Promise<void> {
    if (!isId(timerId)) return;
    await manager.query('UPDATE timers SET calendar_rules = ?, version = version + 1 WHERE id = CAST(? AS UNSIGNED) AND deleted_at IS NULL', [JSON.stringify(rules), timerId]);
  }
}

function toCalendar(r: Row): StoredCalendar {
  return { app: r.app, name: r.name, timeZone: r.time_zone, exclude: parse<CalendarExclude>(r.exclude), createdAt: r.created_at.getTime(), updatedAt: r.updated_at.getTime() };
}
