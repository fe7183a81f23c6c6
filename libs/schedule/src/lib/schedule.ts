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
  /** IANA zone the cron is evaluated in; `UTC` when empty. */
  timeZone: string;
}

/** The spec of a stored timer: its cron, or else its one-shot runAt. */
export function specOf(t: { cron: string | null; runAt: number | string | null; timeZone: string }): ScheduleSpec {
  return t.cron !== null ? { cron: t.cron, timeZone: t.timeZone } : { runAt: Number(t.runAt), timeZone: t.timeZone };
}

/** A schedule that cannot be used; `field` names the offending input. */
export class ScheduleError extends Error {
  constructor(
    readonly field: 'cron' | 'runAt' | 'timeZone',
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
/** Longest accepted cron expression (the column is VARCHAR(255)). */
export const MAX_CRON_LENGTH = 255;

const LOOPS_LIMIT = 'Invalid expression, loop limit exceeded';

type Compiled =
  | { kind: 'once'; runAt: number }
  | { kind: 'cron'; expr: CronExpression; everyHour: boolean; zone: string };

function compile(spec: ScheduleSpec): Compiled {
  if (spec === null || typeof spec !== 'object') throw new ScheduleError('cron', 'a schedule is required');
  const zone = spec.timeZone === undefined || spec.timeZone === null ? 'UTC' : spec.timeZone;
  if (typeof zone !== 'string' || !isKnownTimeZone(zone)) {
    throw new ScheduleError('timeZone', `unknown time zone ${JSON.stringify(zone)}: expected an IANA zone such as "Europe/Berlin"`);
  }
  const hasCron = spec.cron !== undefined && spec.cron !== null;
  const hasRunAt = spec.runAt !== undefined && spec.runAt !== null;
  if (hasCron && hasRunAt) throw new ScheduleError('runAt', 'give either cron or runAt, not both');
  if (!hasCron && !hasRunAt) throw new ScheduleError('cron', 'one of cron or runAt is required');
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
 * Checks a schedule. Throws {@link ScheduleError} naming the field: exactly one of cron/runAt;
 * cron = 5 fields (minute precision) or 6 fields (seconds first, Quartz-style: `*\/5 * * * * *`
 * is every 5 s; never a year field), no random `H`; a valid IANA zone (Intl); runAt a
 * non-negative safe integer of epoch ms.
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

/** Fire instants in [from, to) (integers), ascending, each once. See the DST policy on ScheduleSpec. */
function* instants(c: Compiled, from: number, to: number): Generator<number> {
  if (!(from < to)) return;
  if (c.kind === 'once') {
    if (c.runAt >= from && c.runAt < to) yield c.runAt;
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

