import { CronExpression, CronExpressionParser } from 'cron-parser';
import { isKnownTimeZone, SAMPLE_STEP_MS, ZoneClock } from './zone-clock';

/**
 * When a timer fires: a cron expression or a one-shot instant, evaluated in an IANA time zone.
 *
 * Daylight saving policy (see the lib's README for examples). Cron is matched against local wall
 * clock time; each matching wall time becomes an instant as follows:
 * - A wall time that exists once fires once.
 * - Gap (spring forward, e.g. 02:30 on the last Sunday of March in Europe/Berlin does not exist):
 *   a schedule with fixed hours fires once at the first instant after the gap (03:00 local), however
 *   many of its wall times fall in the gap. A schedule that fires every hour (hour field `*`) runs on
 *   elapsed time instead: the wall times that do not exist are not fired, because the real interval
 *   between its fires is unchanged (01:59:59 CET is followed by 03:00:00 CEST one second later).
 * - Overlap (fall back, e.g. 01:30 happens twice in America/New_York in November): a schedule with
 *   fixed hours fires once, at the first occurrence; a schedule that fires every hour fires at both
 *   occurrences (every real hour / minute keeps its fire, like Vixie cron's wildcard jobs).
 * Every fire instant appears at most once and in ascending order.
 *
 * `dstGap` and `dstOverlap` choose per timer what a schedule with fixed hours does: `dstGap: 'skip'`
 * does not fire wall times that do not exist (instead of once at the gap's end), `dstOverlap: 'both'`
 * fires a repeated wall time at both occurrences (instead of the first). A schedule that fires every
 * hour keeps the elapsed-time rule above whatever they say; on `runAt` and `every` only the defaults
 * are accepted.
 */
export interface ScheduleSpec {
  /** 5 fields (minute precision) or 6 fields (seconds first, Quartz-style); never a year field. */
  cron?: string;
  /** One-shot instant, epoch ms. */
  runAt?: number;
  /** Interval in ms (whole seconds from the API, see {@link parseInterval}): fires at startAt + k * every, k >= 0. */
  every?: number;
  /** IANA zone the cron is evaluated in; `UTC` when empty. An interval runs on elapsed time, whatever the zone. */
  timeZone: string;
  /** No fire before this instant (inclusive); the anchor of an interval, which requires it. Not on a one-shot. */
  startAt?: number;
  /** No fire after this instant (inclusive). Not on a one-shot. */
  endAt?: number;
  /**
   * The instant of the last fire (inclusive bound), computed when the definition was written (the
   * maxFires-th instant, see {@link nthFireTime}); a stored timer keeps it beside endAt.
   */
  finalAt?: number;
  /** A fixed-hour cron's wall times in a spring-forward gap: once at the gap's end (`shift`, default) or not at all (`skip`). */
  dstGap?: DstGap;
  /** A fixed-hour cron's wall times in a fall-back overlap: at the first occurrence (`first`, default) or at both (`both`). */
  dstOverlap?: DstOverlap;
}

export const DST_GAPS = ['shift', 'skip'] as const;
export type DstGap = (typeof DST_GAPS)[number];
export const DST_OVERLAPS = ['first', 'both'] as const;
export type DstOverlap = (typeof DST_OVERLAPS)[number];

/** The stored columns a spec is made of (`timers`, `timer_versions`). */
export interface StoredSchedule {
  cron: string | null;
  runAt: number | string | null;
  everyMs?: number | string | null;
  timeZone: string;
  startAt?: number | string | null;
  endAt?: number | string | null;
  finalAt?: number | string | null;
  dstGap?: string | null;
  dstOverlap?: string | null;
}

const given = (v: number | string | null | undefined): v is number | string => v !== null && v !== undefined;

/** The spec of a stored timer: its cron or interval with its bounds, or its one-shot runAt. */
export function specOf(t: StoredSchedule): ScheduleSpec {
  // A one-shot's stored final_at is its runAt: not a bound of its own.
  if (t.cron === null && !given(t.everyMs)) return { runAt: Number(t.runAt), timeZone: t.timeZone };
  const spec: ScheduleSpec = t.cron !== null ? { cron: t.cron, timeZone: t.timeZone } : { every: Number(t.everyMs), timeZone: t.timeZone };
  if (given(t.startAt)) spec.startAt = Number(t.startAt);
  if (given(t.endAt)) spec.endAt = Number(t.endAt);
  if (given(t.finalAt)) spec.finalAt = Number(t.finalAt);
  if (t.dstGap && t.dstGap !== 'shift') spec.dstGap = t.dstGap as DstGap;
  if (t.dstOverlap && t.dstOverlap !== 'first') spec.dstOverlap = t.dstOverlap as DstOverlap;
  return spec;
}

/** The fields of a schedule the checks can name. */
export type ScheduleField = 'cron' | 'runAt' | 'every' | 'timeZone' | 'startAt' | 'endAt' | 'maxFires' | 'dstGap' | 'dstOverlap';

/** A schedule that cannot be used; `field` names the offending input. */
export class ScheduleError extends Error {
  constructor(
    readonly field: ScheduleField,
    message: string,
  ) {
    super(message);
    this.name = 'ScheduleError';
  }
}

/** Default and ceiling of how many instants one call may return. */
export const DEFAULT_FIRE_LIMIT = 100_000;
/** How far {@link nextFireTimes} looks ahead before giving up on a schedule that fires rarely. */
export const PREVIEW_HORIZON_MS = 100 * 366 * 86_400_000;
/**
 * Most fires a bounded timer may be given (`maxFires`). The last one of an interval is computed in
 * O(1); a cron's are counted one by one through cron-parser (0.1 to 0.5 ms each for a daily cron),
 * so a cron timer may have at most {@link MAX_CRON_FIRES}.
 */
export const MAX_FIRES = 1_000_000;
/** Most fires of a cron timer with `maxFires`: counting them takes at most about half a second. */
export const MAX_CRON_FIRES = 1_000;
/** Longest accepted cron expression (the column is VARCHAR(255)). */
export const MAX_CRON_LENGTH = 255;

/** Shortest interval. */
export const MIN_EVERY_MS = 1_000;
/** Longest interval: 366 days (a yearly timer is a cron's job, `0 0 1 1 *`). */
export const MAX_EVERY_MS = 366 * 86_400_000;
/** Latest instant a bound may name (9999-12-31T23:59:59.999Z). */
export const MAX_INSTANT_MS = 253_402_300_799_999;

const INTERVAL = /^(?:(\d{1,10})d)?(?:(\d{1,10})h)?(?:(\d{1,10})m)?(?:(\d{1,10})s)?$/;
const UNIT_MS = [86_400_000, 3_600_000, 60_000, 1_000];

/**
 * An interval as text ("90s", "5m", "1h30m", "2d"): units d, h, m, s, each at most once and in that
 * order, whole numbers; at least {@link MIN_EVERY_MS}, at most {@link MAX_EVERY_MS}. Returns ms;
 * throws ScheduleError('every').
 */
export function parseInterval(text: unknown): number {
  const m = typeof text === 'string' && text !== '' ? INTERVAL.exec(text) : null;
  if (!m) throw new ScheduleError('every', `every must be an interval such as "90s", "5m" or "1h30m" (units d, h, m, s, each at most once, in that order); got ${JSON.stringify(text)}`);
  const ms = UNIT_MS.reduce((sum, unit, i) => sum + Number(m[i + 1] ?? 0) * unit, 0);
  if (ms < MIN_EVERY_MS) throw new ScheduleError('every', `every must be at least 1s; got ${JSON.stringify(text)}`);
  if (ms > MAX_EVERY_MS) throw new ScheduleError('every', `every must be at most 366d; got ${JSON.stringify(text)}`);
  return ms;
}

/** The canonical text of an interval in ms: "1m30s" for 90,000; a remainder under a second as "<n>ms". */
export function formatInterval(ms: number): string {
  let rest = ms;
  let out = '';
  ['d', 'h', 'm', 's'].forEach((unit, i) => {
    const n = Math.floor(rest / UNIT_MS[i]);
    rest -= n * UNIT_MS[i];
    if (n > 0) out += `${n}${unit}`;
  });
  return rest > 0 || out === '' ? `${out}${rest}ms` : out;
}

/** Inclusive bounds of a schedule's instants. */
interface Bounds {
  from: number;
  to: number;
}

type Kind =
  | { kind: 'once'; runAt: number }
  | { kind: 'every'; every: number; anchor: number }
  | { kind: 'cron'; expr: CronExpression; everyHour: boolean; zone: string; gap: DstGap; overlap: DstOverlap };
type Compiled = Kind & { bounds: Bounds };

const isInstant = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_INSTANT_MS;
const present = (v: unknown) => v !== undefined && v !== null;

function compileBounds(spec: ScheduleSpec, kind: Kind['kind']): Bounds {
  for (const field of ['startAt', 'endAt', 'finalAt'] as const) {
    const v = spec[field];
    if (!present(v)) continue;
    const named = field === 'finalAt' ? 'maxFires' : field;
    if (kind === 'once') throw new ScheduleError(named, `${named} is only for cron and every timers, not for a one-shot runAt`);
    if (!isInstant(v)) throw new ScheduleError(named, `${field} must be an integer of epoch milliseconds in [0, ${MAX_INSTANT_MS}]`);
  }
  const from = spec.startAt ?? 0;
  const to = Math.min(spec.endAt ?? Infinity, spec.finalAt ?? Infinity);
  if (present(spec.endAt) && present(spec.startAt) && (spec.endAt as number) <= from) {
    throw new ScheduleError('endAt', `endAt ${new Date(spec.endAt as number).toISOString()} must be after startAt ${new Date(from).toISOString()}`);
  }
  return { from, to };
}

function compile(spec: ScheduleSpec): Compiled {
  const c = compileKind(spec);
  compileDst(spec, c);
  return Object.assign(c, { bounds: compileBounds(spec, c.kind) });
}

/** Checks the DST choices and puts them on a cron; elsewhere only the defaults are accepted. */
function compileDst(spec: ScheduleSpec, c: Kind): void {
  const choices = [
    ['dstGap', DST_GAPS],
    ['dstOverlap', DST_OVERLAPS],
  ] as const;
  for (const [field, values] of choices) {
    const v = spec[field] as unknown;
    if (!present(v)) continue;
    if (!(values as readonly unknown[]).includes(v)) throw new ScheduleError(field, `${field} must be one of ${values.join(', ')}; got ${JSON.stringify(v)}`);
    if (c.kind !== 'cron' && v !== values[0]) {
      throw new ScheduleError(field, `${field} ${JSON.stringify(v)} is only for cron timers: ${c.kind === 'once' ? 'a one-shot runAt' : 'an every interval'} runs on elapsed time, without DST`);
    }
  }
  if (c.kind === 'cron') Object.assign(c, { gap: spec.dstGap ?? 'shift', overlap: spec.dstOverlap ?? 'first' });
}

function compileKind(spec: ScheduleSpec): Kind {
  if (spec === null || typeof spec !== 'object') throw new ScheduleError('cron', 'a schedule is required');
  const zone = spec.timeZone === undefined || spec.timeZone === null ? 'UTC' : spec.timeZone;
  if (typeof zone !== 'string' || !isKnownTimeZone(zone)) {
    throw new ScheduleError('timeZone', `unknown time zone ${JSON.stringify(zone)}: expected an IANA zone such as "Europe/Berlin"`);
  }
  const hasCron = present(spec.cron);
  const hasRunAt = present(spec.runAt);
  const hasEvery = present(spec.every);
  if (hasEvery && (hasCron || hasRunAt)) throw new ScheduleError('every', `give exactly one of cron, runAt and every, not both every and ${hasCron ? 'cron' : 'runAt'}`);
  if (hasCron && hasRunAt) throw new ScheduleError('runAt', 'give either cron or runAt, not both');
  if (!hasCron && !hasRunAt && !hasEvery) throw new ScheduleError('cron', 'one of cron, runAt or every is required');
  if (hasEvery) {
    const every = spec.every as number;
    if (typeof every !== 'number' || !Number.isSafeInteger(every) || every < MIN_EVERY_MS || every > MAX_EVERY_MS) {
      throw new ScheduleError('every', `every must be an interval of ${MIN_EVERY_MS} to ${MAX_EVERY_MS} ms`);
    }
    if (!present(spec.startAt)) throw new ScheduleError('startAt', 'an interval needs its anchor startAt');
    return { kind: 'every', every, anchor: spec.startAt as number };
  }
  if (hasRunAt) {
    const runAt = spec.runAt as number;
    if (typeof runAt !== 'number' || !Number.isSafeInteger(runAt) || runAt < 0) {
      throw new ScheduleError('runAt', 'runAt must be a non-negative integer of epoch milliseconds');
    }
    return { kind: 'once', runAt };
  }
  const cron = spec.cron as unknown;
  if (typeof cron !== 'string') throw new ScheduleError('cron', 'cron must be a string');
  if (cron.length > MAX_CRON_LENGTH) throw new ScheduleError('cron', `cron is longer than ${MAX_CRON_LENGTH} characters`);
  const fields = cron.trim().split(/\s+/).filter((f) => f.length > 0);
  if (fields.length !== 5 && fields.length !== 6) {
    throw new ScheduleError(
      'cron',
      `cron must have 5 fields (minute hour day-of-month month day-of-week) or 6 (second first); got ${fields.length}`,
    );
  }
  // `H` is cron-parser's random "hash" value: each parse would pick another time, so the api,
  // the migrator and the trigger would disagree about the fires. Day names such as THU are fine.
  const dow = fields.length - 1;
  if (fields.some((f, i) => /h/i.test(i === dow ? f.replace(/thu/gi, '') : f))) {
    throw new ScheduleError('cron', 'cron may not use H (random values)');
  }
  const expr = parsedCron(fields.join(' '), cron);
  return { kind: 'cron', expr, everyHour: expr.fields.hour.values.length === 24, zone, gap: 'shift', overlap: 'first' };
}

/** Parsed cron expressions by text: one create+enable evaluates its schedule about five times, and many timers share a cron. */
const parsed = new Map<string, CronExpression>();
/** Most expressions kept; the cache is dropped whole beyond it. */
const MAX_PARSED = 10_000;

/** The expression of a cron text (only its fields are read, never iterated: one object serves every caller). */
function parsedCron(text: string, asGiven: string): CronExpression {
  let expr = parsed.get(text);
  if (expr) return expr;
  try {
    expr = CronExpressionParser.parse(text, { tz: 'UTC', currentDate: 0 });
  } catch (e) {
    throw new ScheduleError('cron', `invalid cron expression "${asGiven}": ${(e as Error).message}`);
  }
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(text, expr);
  return expr;
}

/**
 * Checks a schedule. Throws {@link ScheduleError} naming the field: exactly one of cron/runAt/every;
 * cron = 5 fields (minute precision) or 6 fields (seconds first, Quartz-style: `*\/5 * * * * *`
 * is every 5 s; never a year field), no random `H`; a valid IANA zone (Intl); runAt a
 * non-negative safe integer of epoch ms; every 1 s to 366 days with its anchor startAt; startAt,
 * endAt and finalAt only on cron and every, endAt after startAt.
 */
export function validateSchedule(spec: ScheduleSpec): void {
  compile(spec);
}

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month0: number): number {
  if (month0 === 1) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month0];
}

/**
 * Wall times on a UTC-like axis without DST, matched by the cron. Steps day by day (a month the cron
 * does not name is skipped whole) and searches a matching day's times in the field values, so a
 * match costs microseconds where cron-parser's `next()` takes 0.1 to 3 ms. cron-parser parses;
 * {@link dayMatches} follows its day rule (`L`, `5L`, `#` included) and a test holds the two together.
 */
class WallCursor {
  private known: { from: number; first: number } | undefined;
  private readonly seconds: number[];
  private readonly minutes: number[];
  private readonly hours: number[];
  private readonly months: Set<number>;
  private readonly doms: Set<number>;
  private readonly dows: Set<number>;
  private readonly domWild: boolean;
  private readonly dowWild: boolean;
  /** The `n` of a day-of-week `#n` (the n-th such weekday of the month), 0 without. */
  private readonly nth: number;
  /** Day of month `L`: the month's last day. */
  private readonly lastDom: boolean;
  /** Weekdays matched in the month's last 7 days when day of week has an `L` (`5L`: the last Friday). */
  private readonly lastDows: Set<number> | undefined;

  constructor(expr: CronExpression) {
    const f = expr.fields;
    const nums = (values: readonly unknown[]) => values.filter((v): v is number => typeof v === 'number').sort((x, y) => x - y);
    this.seconds = nums(f.second.values);
    this.minutes = nums(f.minute.values);
    this.hours = nums(f.hour.values);
    this.months = new Set(nums(f.month.values));
    this.doms = new Set(nums(f.dayOfMonth.values));
    this.dows = new Set(nums(f.dayOfWeek.values).map((d) => d % 7));
    this.domWild = f.dayOfMonth.isWildcard;
    this.dowWild = f.dayOfWeek.isWildcard;
    this.nth = f.dayOfWeek.nthDay > 0 ? f.dayOfWeek.nthDay : 0;
    this.lastDom = f.dayOfMonth.hasLastChar;
    // As cron-parser reads them: the first digit of each value, `5L` and a plain 5 alike.
    this.lastDows = f.dayOfWeek.hasLastChar ? new Set(f.dayOfWeek.values.map((v) => parseInt(String(v).charAt(0), 10) % 7)) : undefined;
  }

  /** The first matching wall time >= from (Infinity when there is none). */
  firstAtOrAfter(from: number): number {
    const k = this.known;
    if (k && k.from <= from && from <= k.first) return k.first;
    const first = this.search(Math.ceil(from / 1000) * 1000);
    this.known = { from, first };
    return first;
  }

  private search(from: number): number {
    const start = new Date(Math.floor(from / DAY_MS) * DAY_MS);
    let tod = from - start.getTime();
    let year = start.getUTCFullYear();
    let month = start.getUTCMonth(); // 0-based
    let date = start.getUTCDate();
    // Month by month, day by day, without a Date per day.
    for (let months = 0; months <= 12 * 400; months++) {
      if (this.months.has(month + 1)) {
        const monthStart = Date.UTC(year, month, 1);
        const lastDay = daysInMonth(year, month);
        let weekday = (new Date(monthStart).getUTCDay() + date - 1) % 7;
        for (; date <= lastDay; date++, weekday = (weekday + 1) % 7, tod = 0) {
          if (!this.dayMatches(date, weekday, lastDay)) continue;
          const t = this.timeOfDayAtOrAfter(tod);
          if (t !== undefined) return monthStart + (date - 1) * DAY_MS + t;
        }
      }
      tod = 0;
      date = 1;
      if (++month === 12) {
        month = 0;
        year++;
      }
    }
    return Infinity; // the calendar repeats every 400 years: never again
  }

  /** cron-parser's rule (`#matchDayOfMonth`): both restricted, either matches; one restricted, it must match. */
  private dayMatches(date: number, weekday: number, lastDay: number): boolean {
    const dom = this.doms.has(date) || (this.lastDom && date === lastDay);
    const dow =
      (this.dows.has(weekday) && (this.nth === 0 || Math.ceil(date / 7) === this.nth)) || (this.lastDows !== undefined && date > lastDay - 7 && this.lastDows.has(weekday));
    if (!this.domWild && !this.dowWild) return dom || dow;
    return this.dowWild ? dom : dow;
  }

  /** The first time of day (ms since midnight) >= tod that the fields match, if any. */
  private timeOfDayAtOrAfter(tod: number): number | undefined {
    const h0 = Math.floor(tod / 3_600_000);
    const m0 = Math.floor((tod % 3_600_000) / 60_000);
    const s0 = Math.floor((tod % 60_000) / 1000);
    for (const h of this.hours) {
      if (h < h0) continue;
      for (const m of this.minutes) {
        if (h === h0 && m < m0) continue;
        for (const sec of this.seconds) {
          if (h === h0 && m === m0 && sec < s0) continue;
          return h * 3_600_000 + m * 60_000 + sec * 1000;
        }
      }
    }
    return undefined;
  }

  /** Matching wall times in [from, to), ascending. */
  *between(from: number, to: number): Generator<number> {
    let w = this.firstAtOrAfter(from);
    while (w < to) {
      yield w;
      w = this.firstAtOrAfter(w + 1);
    }
  }
}

/**
 * How a DST change touched a fire: `shifted` (a fixed-hour wall time in a gap, fired at the gap's end),
 * `repeated` (the second occurrence of a wall time in an overlap), `skipped` (a fixed-hour wall time
 * in a gap with `dstGap: 'skip'`: not a fire, reported by {@link previewFireTimes} only).
 */
export type DstFlag = 'shifted' | 'repeated' | 'skipped';

/** One instant of a schedule: a fire, or (flag `skipped`) a wall time not fired. */
interface Instant {
  t: number;
  /** UTC offset in force at `t` (ms). */
  offset: number;
  dst?: DstFlag;
  /** The wall time (on the UTC-like axis) of a `shifted` or `skipped` instant. */
  wall?: number;
}

/**
 * Largest |UTC offset| a zone ever had (ms), with margin (today's range is -12 h to +14 h, some
 * historical local mean times reach 15:56): no instant of a wall time w lies outside w -/+ this.
 */
const MAX_ABS_OFFSET_MS = 18 * 3_600_000;
/** A rare schedule jumps ahead to its next wall time when that lies further than this ahead. */
const JUMP_MS = 2 * SAMPLE_STEP_MS;
/** How far the time line is cut into pieces between two looks for a jump. */
const STRETCH_MS = 32 * SAMPLE_STEP_MS;

/**
 * Instants in [from, to) (integers) within the spec's bounds, ascending, each fire once, skipped
 * wall times included (see the DST policy on ScheduleSpec).
 */
function* instants(c: Compiled, fromMs: number, toMs: number): Generator<Instant> {
  const from = Math.max(fromMs, c.bounds.from);
  const to = Math.min(toMs, c.bounds.to + 1);
  if (!(from < to)) return;
  if (c.kind === 'once') {
    if (c.runAt >= from && c.runAt < to) yield { t: c.runAt, offset: NaN };
    return;
  }
  if (c.kind === 'every') {
    // Elapsed time from the anchor: no zone, no DST.
    for (let t = c.anchor + Math.max(0, Math.ceil((from - c.anchor) / c.every)) * c.every; t < to; t += c.every) yield { t, offset: NaN };
    return;
  }
  const clock = new ZoneClock(c.zone);
  const cursor = new WallCursor(c.expr);
  const fixedHours = !c.everyHour;
  let last = -Infinity;
  let pos = from;
  while (pos < to) {
    // A rare schedule (29 February, the fifth Monday of February) skips the years between its wall
    // times: no instant of wall time w, gap fires included, lies before w - MAX_ABS_OFFSET_MS.
    const nextWall = cursor.firstAtOrAfter(pos - MAX_ABS_OFFSET_MS);
    if (nextWall === Infinity) return;
    if (nextWall - MAX_ABS_OFFSET_MS > pos + JUMP_MS) pos = nextWall - MAX_ABS_OFFSET_MS;
    if (pos >= to) return;
    const stretchEnd = Math.min(to, pos + STRETCH_MS);
    for (const piece of clock.pieces(pos, stretchEnd)) {
      const { offset, prevOffset, start } = piece;
      if (start !== undefined && fixedHours && start === piece.from && prevOffset < offset) {
        // Gap: wall times [start + prevOffset, start + offset) do not exist.
        for (const w of cursor.between(start + prevOffset, start + offset)) {
          if (c.gap === 'skip') {
            yield { t: start, offset, dst: 'skipped', wall: w };
            continue;
          }
          yield { t: start, offset, dst: 'shifted', wall: w };
          last = start;
          break; // once, however many wall times the gap holds
        }
      }
      // Overlap: wall times below start + prevOffset were lived through before `start`.
      const repeatedUntil = start !== undefined && prevOffset > offset ? start + prevOffset : -Infinity;
      const skipRepeats = fixedHours && c.overlap === 'first';
      for (const w of cursor.between(piece.from + offset, piece.to + offset)) {
        const repeated = w < repeatedUntil;
        if (repeated && skipRepeats) continue;
        const t = w - offset;
        if (t <= last) continue;
        yield repeated ? { t, offset, dst: 'repeated' } : { t, offset };
        last = t;
      }
    }
    pos = stretchEnd;
  }
}

function checkRange(name: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new RangeError(`${name} must be a finite number of epoch ms`);
}

/**
 * All fire instants t with fromMs <= t < toMs, ascending, epoch ms UTC, evaluated in
 * `spec.timeZone` under the DST policy documented on {@link ScheduleSpec}. One-shot: [runAt] when
 * in range. Throws RangeError when there are more than `limit` (default 100 000) so callers never
 * build huge arrays silently; throws ScheduleError for an invalid spec.
 */
export function fireTimesBetween(spec: ScheduleSpec, fromMs: number, toMs: number, limit = DEFAULT_FIRE_LIMIT): number[] {
  checkRange('fromMs', fromMs);
  checkRange('toMs', toMs);
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit must be a non-negative integer');
  const c = compile(spec);
  const out: number[] = [];
  for (const { t, dst } of instants(c, Math.ceil(fromMs), Math.ceil(toMs))) {
    if (dst === 'skipped') continue;
    if (out.length === limit) {
      throw new RangeError(`more than ${limit} fire times between ${new Date(fromMs).toISOString()} and ${new Date(toMs).toISOString()}`);
    }
    out.push(t);
  }
  return out;
}

/**
 * The next `count` fire instants strictly after `afterMs` (a preview), ascending; fewer when the
 * schedule ends (one-shot: at most one) or fires beyond {@link PREVIEW_HORIZON_MS}.
 */
export function nextFireTimes(spec: ScheduleSpec, afterMs: number, count: number): number[] {
  checkRange('afterMs', afterMs);
  if (!Number.isSafeInteger(count) || count < 0 || count > DEFAULT_FIRE_LIMIT) {
    throw new RangeError(`count must be an integer in [0, ${DEFAULT_FIRE_LIMIT}]`);
  }
  const c = compile(spec);
  const out: number[] = [];
  if (count === 0) return out;
  const from = Math.floor(afterMs) + 1;
  for (const { t, dst } of instants(c, from, from + PREVIEW_HORIZON_MS)) {
    if (dst === 'skipped') continue;
    out.push(t);
    if (out.length === count) break;
  }
  return out;
}


/** Most entries one preview may ask for. */
export const MAX_PREVIEW_COUNT = 1_000;

/** One entry of a preview: a fire, or (dst `skipped`) a wall time a gap took away. */
export interface PreviewFire {
  /** Epoch ms: the fire instant (for `skipped`: the instant of the gap). */
  at: number;
  /** UTC offset in force at `at`, ms. */
  offset: number;
  dst?: DstFlag;
  /** The wall time the cron matched, on a UTC-like axis (ms), when a DST change moved it or took it away. */
  wall?: number;
}

/**
 * The next `count` fires strictly after `afterMs` (at most {@link MAX_PREVIEW_COUNT}), each with its
 * UTC offset and a DST flag where a change moved (`shifted`) or doubled (`repeated`) it; wall times a
 * gap skipped (`dstGap: 'skip'`) are listed between them flagged `skipped` and do not count. Stops
 * at {@link PREVIEW_HORIZON_MS}. Throws ScheduleError for an invalid spec.
 */
export function previewFireTimes(spec: ScheduleSpec, afterMs: number, count: number): PreviewFire[] {
  checkRange('afterMs', afterMs);
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_PREVIEW_COUNT) throw new RangeError(`count must be an integer in [1, ${MAX_PREVIEW_COUNT}]`);
  const c = compile(spec);
  const clock = new ZoneClock(c.kind === 'cron' ? c.zone : (spec.timeZone ?? 'UTC'));
  const out: PreviewFire[] = [];
  let fires = 0;
  const from = Math.floor(afterMs) + 1;
  for (const i of instants(c, from, from + PREVIEW_HORIZON_MS)) {
    const entry: PreviewFire = { at: i.t, offset: Number.isNaN(i.offset) ? clock.offsetAt(i.t) : i.offset };
    if (i.dst) entry.dst = i.dst;
    if (i.wall !== undefined) entry.wall = i.wall;
    out.push(entry);
    if (i.dst !== 'skipped' && ++fires === count) break;
    if (out.length >= count + MAX_PREVIEW_COUNT) break; // skipped wall times (up to 3,600 a gap) never grow it unbounded
  }
  return out;
}

/**
 * The `n`-th fire instant at or after `fromMs` (n >= 1) within the spec's bounds, or undefined when
 * the schedule has fewer (before {@link PREVIEW_HORIZON_MS} from `fromMs`). Throws ScheduleError
 * ('maxFires') beyond {@link MAX_FIRES} (interval) or {@link MAX_CRON_FIRES} (cron, counted one by one).
 */
export function nthFireTime(spec: ScheduleSpec, fromMs: number, n: number): number | undefined {
  checkRange('fromMs', fromMs);
  const c = compile(spec);
  const max = c.kind === 'every' ? MAX_FIRES : MAX_CRON_FIRES;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new ScheduleError('maxFires', `maxFires must be an integer from 1 to ${max} for ${c.kind === 'every' ? 'an interval' : 'a cron'} timer${c.kind === 'every' ? '' : ' (for more, bound it with endAt)'}`);
  }
  const from = Math.ceil(fromMs);
  if (c.kind === 'every') {
    const first = c.anchor + Math.max(0, Math.ceil((Math.max(from, c.bounds.from) - c.anchor) / c.every)) * c.every;
    const t = first + (n - 1) * c.every;
    return t <= c.bounds.to ? t : undefined;
  }
  let i = 0;
  for (const { t, dst } of instants(c, from, from + PREVIEW_HORIZON_MS)) if (dst !== 'skipped' && ++i === n) return t;
  return undefined;
}

/**
 * Runs the schedule code once on a rare and a dense expression, so that the first real request of a
 * process does not pay V8's compilation of it (docs/benchmarks.md, "Measurements behind the code").
 * Call at boot; costs a few milliseconds.
 */
export function warmUpSchedules(now = Date.now()): void {
  for (const cron of ['0 0 29 2 *', '*/5 * * * * *']) previewFireTimes({ cron, timeZone: 'UTC' }, now, 100);
}
