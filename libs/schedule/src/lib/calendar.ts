import Holidays from 'date-holidays';
import { fireTimesBetween, PREVIEW_HORIZON_MS, ScheduleSpec } from './schedule';
import { isKnownTimeZone, ZoneClock } from './zone-clock';

/** What a timer does with a fire on a day one of its calendars excludes. */
export const ON_EXCLUDED = ['skip', 'nextBusinessDay', 'previousBusinessDay'] as const;
export type OnExcluded = (typeof ON_EXCLUDED)[number];

/** A range of excluded dates, both inclusive (`YYYY-MM-DD`). */
export interface DateRange {
  from: string;
  to: string;
}

/** A country's (and optionally one of its regions') public holidays, as `date-holidays` knows them. */
export interface HolidayRule {
  country: string;
  region?: string;
}

/** The days a calendar excludes (the API's `exclude`; field names are the public contract). */
export interface CalendarExclude {
  dates?: (string | DateRange)[];
  holidays?: HolidayRule[];
  /** ISO weekday numbers: 1 = Monday .. 7 = Sunday. */
  weekdays?: number[];
}

/** A calendar as fires are evaluated against it. */
export interface CalendarRules {
  name: string;
  /** The zone its days are read in; null: the timer's. */
  timeZone: string | null;
  exclude: CalendarExclude;
}

/**
 * How far a moved fire is looked for a business day (days): it bounds the days of fires a window reads
 * (docs/calendars.md, "Limits"); a fire with no business day within it is recorded missed.
 */
export const MAX_BUSINESS_DAY_SEARCH = 31;
/** Most dates (single days and ranges together) one calendar may list. */
export const MAX_CALENDAR_DATES_ENTRIES = 1_000;
/** Most holiday rules one calendar may list. */
export const MAX_CALENDAR_HOLIDAYS = 50;
/** Longest date range: a year and a day. */
export const MAX_DATE_RANGE_DAYS = 366;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** A preview's first window: a dense schedule after a long run of excluded days reads a minute of each of its days. */
const FIRST_WINDOW_MS = 60_000;
/** Most days one calendar (and one timer's calendars together) remember a decision for; dropped whole beyond it. */
const MAX_DECIDED_DAYS = 10_000;
/** More than any zone's DST change: a wall time shifted by whole days is within this of k days' ms. */
const DST_MARGIN_MS = 3 * 3_600_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar that cannot be used; `field` names the offending input (`exclude.holidays[0].country`). */
export class CalendarError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'CalendarError';
  }
}

/** Epoch day of a `YYYY-MM-DD` date, or undefined when it is not a real date. */
function epochDay(text: unknown): number | undefined {
  const m = typeof text === 'string' ? DATE.exec(text) : null;
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (y < 1970 || back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return ms / DAY_MS;
}

let registry: Holidays | undefined;
const countriesOf = () => (registry ??= new Holidays()).getCountries('en') ?? {};

/**
 * Checks a calendar's `timeZone` and `exclude`. Throws {@link CalendarError} naming the field: dates
 * are real `YYYY-MM-DD` days or `{from, to}` ranges with from <= to (at most a year long); holidays name a
 * country (ISO 3166-1 alpha-2) and optionally a region that `date-holidays` knows; weekdays are 1..7.
 */
export function validateCalendar(timeZone: unknown, exclude: unknown): void {
  if (timeZone !== undefined && timeZone !== null && (typeof timeZone !== 'string' || !isKnownTimeZone(timeZone))) {
    throw new CalendarError('timeZone', `unknown time zone ${JSON.stringify(timeZone)}: expected an IANA zone such as "Europe/Berlin"`);
  }
  if (exclude === null || typeof exclude !== 'object' || Array.isArray(exclude)) throw new CalendarError('exclude', 'exclude must be an object with dates, holidays or weekdays');
  const e = exclude as Record<string, unknown>;
  for (const key of Object.keys(e)) if (!['dates', 'holidays', 'weekdays'].includes(key)) throw new CalendarError(`exclude.${key}`, `exclude.${key} is not a field: use dates, holidays or weekdays`);
  checkDates(e.dates);
  checkHolidays(e.holidays);
  checkWeekdays(e.weekdays);
}

function arrayOf(field: string, v: unknown, max: number): unknown[] {
  if (!Array.isArray(v)) throw new CalendarError(field, `${field} must be an array`);
  if (v.length > max) throw new CalendarError(field, `${field} may have at most ${max} entries; got ${v.length}`);
  return v;
}

function checkDates(v: unknown): void {
  if (v === undefined) return;
  arrayOf('exclude.dates', v, MAX_CALENDAR_DATES_ENTRIES).forEach((d, i) => {
    const field = `exclude.dates[${i}]`;
    if (typeof d === 'string') {
      if (epochDay(d) === undefined) throw new CalendarError(field, `${field} must be a date such as "2026-12-24"; got ${JSON.stringify(d)}`);
      return;
    }
    if (d === null || typeof d !== 'object' || Array.isArray(d)) throw new CalendarError(field, `${field} must be a date "YYYY-MM-DD" or {from, to}`);
    const r = d as Record<string, unknown>;
    for (const key of Object.keys(r)) if (key !== 'from' && key !== 'to') throw new CalendarError(`${field}.${key}`, `${field}.${key} is not a field: a range has from and to`);
    const from = epochDay(r.from);
    const to = epochDay(r.to);
    if (from === undefined) throw new CalendarError(`${field}.from`, `${field}.from must be a date such as "2026-12-24"; got ${JSON.stringify(r.from)}`);
    if (to === undefined) throw new CalendarError(`${field}.to`, `${field}.to must be a date such as "2026-12-31"; got ${JSON.stringify(r.to)}`);
    if (from > to) throw new CalendarError(`${field}.from`, `${field}.from ${String(r.from)} is after ${field}.to ${String(r.to)}`);
    if (to - from + 1 > MAX_DATE_RANGE_DAYS) throw new CalendarError(`${field}.to`, `${field} spans ${to - from + 1} days; at most ${MAX_DATE_RANGE_DAYS}`);
  });
}

function checkHolidays(v: unknown): void {
  if (v === undefined) return;
  const countries = countriesOf();
  arrayOf('exclude.holidays', v, MAX_CALENDAR_HOLIDAYS).forEach((h, i) => {
    const field = `exclude.holidays[${i}]`;
    if (h === null || typeof h !== 'object' || Array.isArray(h)) throw new CalendarError(field, `${field} must be {country, region?}`);
    const r = h as Record<string, unknown>;
    for (const key of Object.keys(r)) if (key !== 'country' && key !== 'region') throw new CalendarError(`${field}.${key}`, `${field}.${key} is not a field: a holiday rule has country and region`);
    if (typeof r.country !== 'string' || !Object.prototype.hasOwnProperty.call(countries, r.country)) {
      throw new CalendarError(`${field}.country`, `${field}.country: unknown country ${JSON.stringify(r.country)} (an ISO 3166-1 alpha-2 code such as "DE")`);
    }
    if (r.region === undefined) return;
    const regions = (registry as Holidays).getStates(r.country, 'en') ?? {};
    if (typeof r.region !== 'string' || !Object.prototype.hasOwnProperty.call(regions, r.region)) {
      throw new CalendarError(`${field}.region`, `${field}.region: unknown region ${JSON.stringify(r.region)} of ${r.country}${Object.keys(regions).length > 0 ? ` (one of ${Object.keys(regions).join(', ')})` : ' (it has none)'}`);
    }
  });
}

function checkWeekdays(v: unknown): void {
  if (v === undefined) return;
  arrayOf('exclude.weekdays', v, 7).forEach((d, i) => {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1 || d > 7) throw new CalendarError(`exclude.weekdays[${i}]`, `exclude.weekdays[${i}] must be an ISO weekday number 1 (Monday) to 7 (Sunday); got ${JSON.stringify(d)}`);
  });
}

/** Public holidays by `country/region/year`: `date-holidays` computes a year in about a millisecond. */
const holidayDays = new Map<string, Set<number>>();
const MAX_HOLIDAY_YEARS = 5_000;
const engines = new Map<string, Holidays>();

function publicHolidays(rule: HolidayRule, year: number): Set<number> {
  const key = `${rule.country}/${rule.region ?? ''}/${year}`;
  let days = holidayDays.get(key);
  if (days) return days;
  const engineKey = `${rule.country}/${rule.region ?? ''}`;
  let engine = engines.get(engineKey);
  if (!engine) {
    engine = rule.region ? new Holidays(rule.country, rule.region) : new Holidays(rule.country);
    engines.set(engineKey, engine);
  }
  days = new Set(
    engine
      .getHolidays(year)
      .filter((h) => h.type === 'public')
      .map((h) => epochDay(h.date.slice(0, 10)))
      .filter((d): d is number => d !== undefined),
  );
  if (holidayDays.size >= MAX_HOLIDAY_YEARS) holidayDays.clear();
  holidayDays.set(key, days);
  return days;
}

/** One calendar, compiled: whether it excludes an epoch day of its zone. */
class CompiledCalendar {
  private readonly days = new Set<number>();
  private readonly ranges: [number, number][] = [];
  private readonly weekdays: Set<number>;
  private readonly decided = new Map<number, boolean>();
  readonly clock: ZoneClock;

  constructor(
    readonly rules: CalendarRules,
    timerZone: string,
  ) {
    this.clock = new ZoneClock(rules.timeZone ?? timerZone);
    for (const d of rules.exclude.dates ?? []) {
      if (typeof d === 'string') this.days.add(epochDay(d) as number);
      else this.ranges.push([epochDay(d.from) as number, epochDay(d.to) as number]);
    }
    this.weekdays = new Set(rules.exclude.weekdays ?? []);
  }

  /** The epoch day (of this calendar's zone) instant `t` falls on. */
  dayOf(t: number): number {
    return Math.floor((t + this.clock.offsetAt(t)) / DAY_MS);
  }

  /** {@link excludes}, remembered per day: a window asks about the same few days for each of its fires. */
  excludesCached(day: number): boolean {
    let v = this.decided.get(day);
    if (v === undefined) {
      if (this.decided.size >= MAX_DECIDED_DAYS) this.decided.clear();
      this.decided.set(day, (v = this.excludes(day)));
    }
    return v;
  }

  excludes(day: number): boolean {
    if (this.days.has(day)) return true;
    if (this.ranges.some(([a, b]) => a <= day && day <= b)) return true;
    // Epoch day 0 was a Thursday (ISO 4).
    if (this.weekdays.has(((day + 3) % 7) + 1)) return true;
    const holidays = this.rules.exclude.holidays ?? [];
    if (holidays.length === 0) return false;
    const year = new Date(day * DAY_MS).getUTCFullYear();
    return holidays.some((h) => publicHolidays(h, year).has(day));
  }
}

/** A fire once the calendars are applied. */
export interface CalendarFire {
  /** When it goes out (for an excluded fire: its own time, recorded missed). */
  at: number;
  /** The calendar that excluded it: the fire is not delivered, it is recorded missed as `calendar <name>`. */
  excluded?: string;
  /** A moved fire: the time the schedule gave, on a day `calendar` excludes. */
  movedFrom?: number;
  /** The calendar that excluded the day of a moved or excluded fire. */
  calendar?: string;
}

/**
 * The calendars a timer refers to, with its `onExcluded`: a business day is one no calendar excludes
 * (each read in its own zone, else the timer's). A fire on another day is excluded (`skip`) or moved to
 * the same wall time (in the timer's zone) of the next or previous business day, looked for over at most
 * {@link MAX_BUSINESS_DAY_SEARCH} days; one that finds none is excluded. An instance remembers the
 * decision of each day it was asked about: make one per window or request, not one per process.
 */
export class BusinessCalendar {
  private readonly calendars: CompiledCalendar[];
  private readonly timerClock: ZoneClock;
  /** Days to the business day, by direction and the days (of each calendar's zone) a fire falls on; 0: none within the search. */
  private readonly moves = new Map<string, number>();

  constructor(
    calendars: readonly CalendarRules[],
    readonly onExcluded: OnExcluded,
    timerZone: string,
  ) {
    const zone = timerZone || 'UTC';
    this.calendars = calendars.map((c) => new CompiledCalendar(c, zone));
    this.timerClock = new ZoneClock(zone);
  }

  /** The calendar that excludes the day of instant `t`, if one does. */
  excludedBy(t: number): string | undefined {
    return this.calendars.find((c) => c.excludesCached(c.dayOf(t)))?.rules.name;
  }

  /** Instant `t` shifted by `days` whole days of wall time in the timer's zone. */
  private shifted(t: number, days: number): number {
    const wall = t + this.timerClock.offsetAt(t) + days * DAY_MS;
    const first = wall - this.timerClock.offsetAt(wall);
    return wall - this.timerClock.offsetAt(first);
  }

  /** Whole days from `days` (one per calendar) to the first on which no calendar excludes its day, 0 when none is within the search. */
  private daysToBusinessDay(days: number[], step: 1 | -1): number {
    const key = `${step}:${days.join(',')}`;
    let k = this.moves.get(key);
    if (k !== undefined) return k;
    k = 0;
    for (let j = 1; j <= MAX_BUSINESS_DAY_SEARCH && k === 0; j++) if (this.calendars.every((c, i) => !c.excludesCached(days[i] + j * step))) k = j;
    if (this.moves.size >= MAX_DECIDED_DAYS) this.moves.clear();
    this.moves.set(key, k);
    return k;
  }

  /** The fire the schedule gives at `t`, after the calendars. */
  apply(t: number): CalendarFire {
    const days = this.calendars.map((c) => c.dayOf(t));
    const i = days.findIndex((d, j) => this.calendars[j].excludesCached(d));
    if (i < 0) return { at: t };
    const name = this.calendars[i].rules.name;
    if (this.onExcluded === 'skip') return { at: t, excluded: name, calendar: name };
    const step = this.onExcluded === 'nextBusinessDay' ? 1 : -1;
    const k = this.daysToBusinessDay(days, step);
    if (k > 0) {
      const moved = this.shifted(t, k * step);
      if (this.excludedBy(moved) === undefined) return { at: moved, movedFrom: t, calendar: name };
      // A DST change at midnight put the same wall time on a neighbouring day: look instant by instant.
      for (let j = 1; j <= MAX_BUSINESS_DAY_SEARCH; j++) {
        const at = this.shifted(t, j * step);
        if (this.excludedBy(at) === undefined) return { at, movedFrom: t, calendar: name };
      }
    }
    return { at: t, excluded: name, calendar: name };
  }

  /**
   * Whether one calendar excludes every day [fromMs, toMs) touches (widened for a DST change): then no
   * fire is moved into it, and its own fires are all the window holds.
   */
  private fullyExcluded(fromMs: number, toMs: number): boolean {
    return this.calendars.some((c) => {
      const steady = c.clock.offsetAt(fromMs - DST_MARGIN_MS) === c.clock.offsetAt(toMs - 1 + DST_MARGIN_MS) && toMs - fromMs <= DAY_MS;
      const margin = steady ? 0 : DST_MARGIN_MS;
      const [a, b] = [c.dayOf(fromMs - margin), c.dayOf(toMs - 1 + margin)];
      if (b - a > MAX_BUSINESS_DAY_SEARCH) return false;
      for (let d = a; d <= b; d++) if (!c.excludesCached(d)) return false;
      return true;
    });
  }

  /**
   * The stretch of instants whose fires, moved by the whole days of `shift` ms, land in [from, to): when
   * the timer's zone keeps one offset around each of the two, exactly the window moved by `shift` and
   * by the difference of their offsets (a moved fire keeps its wall time); else widened by the most a DST
   * change moves a wall time.
   */
  private sourceOf(from: number, to: number, shift: number): [number, number] {
    const wide: [number, number] = [from + shift - DST_MARGIN_MS, to + shift + DST_MARGIN_MS];
    if (to - from > DAY_MS) return wide;
    const steady = (a: number, b: number): number | undefined => {
      const o = this.timerClock.offsetAt(a);
      return [a - DST_MARGIN_MS, b, b + DST_MARGIN_MS].every((p) => this.timerClock.offsetAt(p) === o) ? o : undefined;
    };
    const target = steady(from, to);
    const source = steady(from + shift, to + shift);
    if (target === undefined || source === undefined) return wide;
    return [from + shift + target - source, to + shift + target - source];
  }

  /**
   * The stretches of time whose fires can land in [from, to), disjoint and ascending: the window itself
   * and, when fires move, the window shifted by each day of the run of excluded days next to it (a moved
   * fire keeps its wall time; at most {@link MAX_BUSINESS_DAY_SEARCH} of them), widened around a DST
   * change. For a window of minutes they are minutes, not the whole run; a window on excluded days
   * is read alone.
   */
  private sources(from: number, to: number): [number, number][] {
    if (this.onExcluded === 'skip' || this.fullyExcluded(from, to)) return [[from, to]];
    const step = this.onExcluded === 'nextBusinessDay' ? -1 : 1;
    const edge = step < 0 ? from : to;
    let run = 0;
    while (run < MAX_BUSINESS_DAY_SEARCH && this.excludedBy(edge + step * (run + 1) * DAY_MS) !== undefined) run++;
    const out: [number, number][] = [[from, to]];
    for (let k = 1; k <= run + 1; k++) {
      out.push(this.sourceOf(from, to, step * k * DAY_MS));
    }
    out.sort((a, b) => a[0] - b[0]);
    // Disjoint, not merged: each stretch stays about the window's size, within the schedule's read limit.
    const disjoint: [number, number][] = [];
    let end = -Infinity;
    for (const [a, b] of out) {
      if (b <= end) continue;
      disjoint.push([Math.max(a, end), b]);
      end = b;
    }
    return disjoint;
  }

  /**
   * The fires in [fromMs, toMs) after the calendars, ascending and each instant once (a moved fire that
   * meets another fire is one fire; an undelivered excluded one gives way to a delivered one; one that
   * would move out of the schedule's bounds is excluded). Every
   * window gives its share of the same fires, so windows evaluated apart agree. Throws like
   * {@link fireTimesBetween} (`limit` bounds the schedule's own fires read per stretch).
   */
  firesBetween(spec: ScheduleSpec, fromMs: number, toMs: number, limit?: number): CalendarFire[] {
    const byAt = new Map<number, CalendarFire>();
    // A fire is never moved out of the schedule's bounds (before startAt, after endAt or the last fire
    // maxFires gives): it is recorded missed instead, so a timer's fires end where its bounds say.
    const first = spec.startAt ?? -Infinity;
    const last = Math.min(spec.endAt ?? Infinity, spec.finalAt ?? Infinity);
    for (const [a, b] of this.sources(fromMs, toMs)) {
      for (const t of fireTimesBetween(spec, a, b, limit)) {
        let f = this.apply(t);
        if (f.movedFrom !== undefined && (f.at < first || f.at > last)) f = { at: t, excluded: f.calendar, calendar: f.calendar };
        if (f.at < fromMs || f.at >= toMs) continue;
        const seen = byAt.get(f.at);
        if (!seen || rank(f) < rank(seen)) byAt.set(f.at, f);
      }
    }
    return [...byAt.values()].sort((a, b) => a.at - b.at);
  }

  /**
   * The end of the days from `fromMs` on whose fires all move away (a window on them holds none): at
   * most {@link MAX_BUSINESS_DAY_SEARCH} of them, so a preview walks over a run of excluded days
   * without reading each of its fires. `fromMs` itself when its day keeps fires.
   */
  private movedAwayUntil(spec: ScheduleSpec, fromMs: number, horizon: number): number {
    if (this.onExcluded === 'skip') return fromMs;
    // Moved within the bounds: a fire that would move out of them is recorded missed where it is.
    const [first, last] = [spec.startAt ?? -Infinity, Math.min(spec.endAt ?? Infinity, spec.finalAt ?? Infinity)];
    const away = (p: number) => {
      const f = this.apply(Math.floor(p));
      return f.movedFrom !== undefined && f.at >= first && f.at <= last;
    };
    const movedAway = (a: number, b: number) => b <= horizon && this.fullyExcluded(a, b) && [a, (a + b) / 2, b - 1].every(away);
    let t = fromMs;
    // Whole days, then the hours up to the day that keeps fires.
    for (let i = 0; i <= MAX_BUSINESS_DAY_SEARCH && movedAway(t, t + DAY_MS); i++) t += DAY_MS;
    for (let i = 0; i < 24 && movedAway(t, t + HOUR_MS); i++) t += HOUR_MS;
    return t;
  }

  /**
   * The first `count` fires strictly after `afterMs` (within {@link PREVIEW_HORIZON_MS}), excluded ones
   * included: windows that double from a minute, so a dense schedule reads little and a rare one few
   * windows; days whose fires all move away are stepped over, and the windows start again from a minute.
   * A window with more fires than one read takes is read again narrower, down to a minute (at most 60
   * fires), so no schedule makes it throw for its density.
   */
  nextFires(spec: ScheduleSpec, afterMs: number, count: number): CalendarFire[] {
    const from = Math.floor(afterMs) + 1;
    const horizon = from + PREVIEW_HORIZON_MS;
    const out: CalendarFire[] = [];
    let start = from;
    let width = FIRST_WINDOW_MS;
    while (out.length < count && start < horizon) {
      const skipTo = this.movedAwayUntil(spec, start, horizon);
      if (skipTo > start) {
        start = skipTo;
        width = FIRST_WINDOW_MS;
        continue;
      }
      const end = Math.min(start + width, horizon);
      let fires: CalendarFire[];
      try {
        fires = this.firesBetween(spec, start, end);
      } catch (e) {
        // Too many fires for one read (a dense schedule after a sparse stretch): the same start, narrower.
        if (!(e instanceof RangeError) || width <= FIRST_WINDOW_MS) throw e;
        width = Math.max(FIRST_WINDOW_MS, width / 8);
        continue;
      }
      for (const f of fires) {
        out.push(f);
        if (out.length === count) break;
      }
      start = end;
      width *= 2;
    }
    return out;
  }

  /** The first fire at or after `fromMs` that is delivered or recorded (its `next_fire_at`), or null. */
  nextFireAt(spec: ScheduleSpec, fromMs: number): number | null {
    return this.nextFires(spec, fromMs - 1, 1)[0]?.at ?? null;
  }
}

/** A fire as it is (0) over a moved one (1) over one recorded missed (2). */
const rank = (f: CalendarFire) => (f.excluded !== undefined ? 2 : f.movedFrom !== undefined ? 1 : 0);
