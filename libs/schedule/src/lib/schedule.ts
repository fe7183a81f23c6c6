import { CronExpression, CronExpressionParser } from 'cron-parser';
import { isKnownTimeZone, ZoneClock } from './zone-clock';

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
}

/** The stored columns a spec is made of (`timers`, `timer_versions`). */
export interface StoredSchedule {
  cron: string | null;
  runAt: number | string | null;
  everyMs?: number | string | null;
  timeZone: string;
  startAt?: number | string | null;
  endAt?: number | string | null;
  finalAt?: number | string | null;
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
  return spec;
}

/** The fields of a schedule the checks can name. */
export type ScheduleField = 'cron' | 'runAt' | 'every' | 'timeZone' | 'startAt' | 'endAt' | 'maxFires';

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

const LOOPS_LIMIT = 'Invalid expression, loop limit exceeded';
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
  | { kind: 'cron'; expr: CronExpression; everyHour: boolean; zone: string };
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
  return Object.assign(c, { bounds: compileBounds(spec, c.kind) });
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
  let expr: CronExpression;
  try {
    expr = CronExpressionParser.parse(fields.join(' '), { tz: 'UTC', currentDate: 0 });
  } catch (e) {
    throw new ScheduleError('cron', `invalid cron expression "${cron}": ${(e as Error).message}`);
  }
  return { kind: 'cron', expr, everyHour: expr.fields.hour.values.length === 24, zone };
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

/**
 * Wall times on a UTC-like axis without DST, matched by the cron. Remembers the last answer so
 * that a rare schedule (say the fifth Friday of February) does not make cron-parser search the
 * same years again for every DST piece of the time line.
 */
class WallCursor {
  private known: { from: number; first: number } | undefined;
  /** Where cron-parser's iterator stands (its next() answers strictly after this). */
  private at: number | undefined;

  constructor(private readonly expr: CronExpression) {}

  /** The first matching wall time >= from (Infinity when there is none). */
  private firstAtOrAfter(from: number): number {
    const k = this.known;
    if (k && k.from <= from && from <= k.first) return k.first;
    if (this.at !== from - 1) this.expr.reset(new Date(from - 1));
    let first: number;
    try {
      first = this.expr.next().getTime();
      this.at = first;
    } catch (e) {
      if ((e as Error).message !== LOOPS_LIMIT) throw e;
      first = Infinity; // never matches again
      this.at = undefined;
    }
    this.known = { from, first };
    return first;
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

/** Fire instants in [from, to) (integers) within the spec's bounds, ascending, each once. See the DST policy on ScheduleSpec. */
function* instants(c: Compiled, fromMs: number, toMs: number): Generator<number> {
  const from = Math.max(fromMs, c.bounds.from);
  const to = Math.min(toMs, c.bounds.to + 1);
  if (!(from < to)) return;
  if (c.kind === 'once') {
    if (c.runAt >= from && c.runAt < to) yield c.runAt;
    return;
  }
  if (c.kind === 'every') {
    // Elapsed time from the anchor: no zone, no DST.
    for (let t = c.anchor + Math.max(0, Math.ceil((from - c.anchor) / c.every)) * c.every; t < to; t += c.every) yield t;
    return;
  }
  const clock = new ZoneClock(c.zone);
  const cursor = new WallCursor(c.expr);
  let last = -Infinity;
  for (const piece of clock.pieces(from, to)) {
    const { offset, prevOffset, start } = piece;
    if (start !== undefined && !c.everyHour) {
      // Gap: wall times [start + prevOffset, start + offset) do not exist; fire once at `start`.
      if (start === piece.from && prevOffset < offset) {
        const skipped = cursor.between(start + prevOffset, start + offset).next();
        if (!skipped.done) {
          yield start;
          last = start;
        }
      }
    }
    // Overlap: wall times below start + prevOffset were lived through before `start`.
    const repeatedUntil = start !== undefined && prevOffset > offset && !c.everyHour ? start + prevOffset : -Infinity;
    for (const w of cursor.between(piece.from + offset, piece.to + offset)) {
      if (w < repeatedUntil) continue;
      const t = w - offset;
      if (t <= last) continue;
      yield t;
      last = t;
    }
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
  for (const t of instants(c, Math.ceil(fromMs), Math.ceil(toMs))) {
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
  for (const t of instants(c, from, from + PREVIEW_HORIZON_MS)) {
    out.push(t);
    if (out.length === count) break;
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
  for (const t of instants(c, from, from + PREVIEW_HORIZON_MS)) if (++i === n) return t;
  return undefined;
}
