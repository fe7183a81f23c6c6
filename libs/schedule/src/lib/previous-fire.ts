import { fireTimesBetween, PREVIEW_HORIZON_MS, ScheduleSpec } from './schedule';

/** The first look-back span of a cron; each further one is 16 times longer (1 s, 16 s, 4 min, ... 100 years). */
const FIRST_SPAN_MS = 1_000;
const SPAN_FACTOR = 16;

/**
 * The schedule's fire instant just before `beforeMs` (strictly), within its bounds; undefined for the
 * first fire (or a one-shot). An interval answers in O(1); a cron looks back over spans growing 16-fold,
 * so a frequent cron costs one short evaluation and a yearly one a handful, never a day-by-day walk.
 */
export function previousFireTime(spec: ScheduleSpec, beforeMs: number): number | undefined {
  if (spec.runAt !== undefined && spec.runAt !== null) return undefined;
  const lower = spec.startAt ?? 0;
  if (spec.every !== undefined && spec.every !== null) {
    const anchor = spec.startAt as number;
    const k = Math.ceil((beforeMs - anchor) / spec.every) - 1;
    return k >= 0 ? anchor + k * spec.every : undefined;
  }
  let emptyFrom = beforeMs;
  for (let span = FIRST_SPAN_MS; ; span *= SPAN_FACTOR) {
    const from = Math.max(lower, beforeMs - span);
    const last = lastBetween(spec, from, emptyFrom, beforeMs);
    if (last !== undefined) return last;
    if (from <= lower || span >= PREVIEW_HORIZON_MS) return undefined;
    emptyFrom = from;
  }
}

/**
 * The last fire in [from, before), knowing [emptyFrom, before) has none. When the span holds more
 * fires than one evaluation may return (a dense cron after a long quiet spell), halves it towards
 * `emptyFrom` until it holds some but not too many.
 */
function lastBetween(spec: ScheduleSpec, from: number, emptyFrom: number, before: number): number | undefined {
  let tooMany = from;
  let none = emptyFrom;
  for (let start = from; ; start = Math.floor((tooMany + none) / 2)) {
    try {
      const times = fireTimesBetween(spec, start, before);
      if (times.length > 0) return times[times.length - 1];
      if (start === from) return undefined;
      none = start;
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      tooMany = start;
    }
  }
}
