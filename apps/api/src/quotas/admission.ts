import { MINUTE_MS } from '@timer/contracts';
import { nextFireTimes, ScheduleSpec } from '@timer/schedule';

/** Fires a schedule may have in one second: cron has second precision and intervals are at least 1 s. */
export const MAX_FIRES_PER_SECOND_PER_TIMER = 1;
/** Open fires of one timer in one minute at most: 60 a second apart, and one moved there (a maintenance window's end). */
export const MAX_OPEN_FIRES_PER_MINUTE_PER_TIMER = 61;

/** Fires looked at (within a day) for a cron's smallest gap when no cheaper bound decides. */
export const GAP_SAMPLE_FIRES = 500;
const DAY_MS = 86_400_000;

/** Upper bound of a timer's fires per minute, without evaluating its schedule. */
export function maxFiresPerMinuteBound(spec: ScheduleSpec): number {
  if (spec.runAt !== undefined) return 1;
  if (spec.every !== undefined) return Math.ceil(MINUTE_MS / spec.every);
  return hasSecondsField(spec) ? 60 : 1;
}

/** Lower bound of the gap between two fires, without evaluating the schedule. */
export function minGapBound(spec: ScheduleSpec): number {
  if (spec.runAt !== undefined) return Infinity;
  if (spec.every !== undefined) return spec.every;
  return hasSecondsField(spec) ? 1_000 : MINUTE_MS;
}

/**
 * The smallest gap between consecutive fires (ms) and where it starts, among the fires of the coming
 * day after `now` (at most {@link GAP_SAMPLE_FIRES}); null when fewer than two fires. An interval's
 * gap is its `every` (its bounds only remove fires).
 */
export function smallestGap(spec: ScheduleSpec, now: number): { gapMs: number; at: number } | null {
  const times = nextFireTimes(spec, now - 1, GAP_SAMPLE_FIRES).filter((t) => t < now + DAY_MS);
  let best: { gapMs: number; at: number } | null = null;
  for (let i = 1; i < times.length; i++) {
    const gap = times[i] - times[i - 1];
    if (!best || gap < best.gapMs) best = { gapMs: gap, at: times[i - 1] };
  }
  return best;
}

/** Fires per bucket (bucket start -> count) of a list of instants. */
export function histogramOf(times: readonly number[], bucketMs: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of times) {
    const b = Math.floor(t / bucketMs) * bucketMs;
    out.set(b, (out.get(b) ?? 0) + 1);
  }
  return out;
}

/** A load by bucket (bucket start -> fires): a map, or a view over several. */
export type Loads = Pick<ReadonlyMap<number, number>, 'get'>;

/** A bucket's load once the candidate is added: what is there (`existing`) and what it adds. */
export interface BucketLoad {
  at: number;
  existing: number;
  added: number;
  total: number;
}

/**
 * The busiest bucket among those the candidate adds fires to, with `existing` (minus the candidate's
 * own fires already stored, `own`) plus the candidate's; null when the candidate adds none.
 */
export function busiestWith(existing: Loads, added: ReadonlyMap<number, number>, own: ReadonlyMap<number, number> = new Map()): BucketLoad | null {
  let best: BucketLoad | null = null;
  for (const [at, n] of added) {
    const there = Math.max(0, (existing.get(at) ?? 0) - (own.get(at) ?? 0));
    const total = there + n;
    if (!best || total > best.total || (total === best.total && at < best.at)) best = { at, existing: there, added: n, total };
  }
  return best;
}

/**
 * The step of an autoSpread offset: the load projection's bucket (one second), so a timer moved by a
 * whole number of steps moves each of its fires to another second whole, whatever its run_at's ms.
 */
export const SPREAD_STEP_MS = 1_000;

/** The offsets autoSpread may give a timer: 0, 1 s, 2 s, ... below `jitterMs` (only 0 under 1 s). */
export function spreadOffsets(jitterMs: number): number[] {
  return Array.from({ length: Math.max(1, Math.ceil(jitterMs / SPREAD_STEP_MS)) }, (_, i) => i * SPREAD_STEP_MS);
}

/** An offset and the busiest second the candidate's fires would land in with it. */
export interface SpreadChoice {
  offsetMs: number;
  busiest: BucketLoad | null;
}

/**
 * The least-loaded offset for a candidate (autoSpread): of `offsets` (ascending), the one whose
 * busiest second, among those the candidate's fires (`added`, by second, unshifted) land in once
 * moved by it, is lowest; the smallest offset on a tie. `existing` and `own` as in {@link busiestWith}.
 * Deterministic: the same load and candidate give the same offset. The caller compares `busiest.total`
 * with the capacity (none fits when even this one is over it).
 */
export function leastLoadedOffset(
  existing: Loads,
  added: ReadonlyMap<number, number>,
  own: ReadonlyMap<number, number>,
  offsets: readonly number[],
): SpreadChoice {
  const totalAt = (at: number, n: number) => Math.max(0, (existing.get(at) ?? 0) - (own.get(at) ?? 0)) + n;
  let best: SpreadChoice | null = null;
  // The fire (unshifted second) that was busiest at the last offset scanned whole: tried first, it
  // usually rules the next offset out at once (a load rising over the range would otherwise be scanned
  // whole for every offset).
  let hint: number | undefined;
  for (const offsetMs of offsets) {
    const bar = best?.busiest?.total;
    // Cannot beat the best so far (a tie goes to the smaller offset, seen first): next offset.
    if (bar !== undefined && hint !== undefined && totalAt(hint + offsetMs, added.get(hint) ?? 0) >= bar) continue;
    let busiest: BucketLoad | null = null;
    for (const [second, n] of added) {
      const at = second + offsetMs;
      const total = totalAt(at, n);
      if (!busiest || total > busiest.total || (total === busiest.total && at < busiest.at)) busiest = { at, existing: total - n, added: n, total };
      if (bar !== undefined && total >= bar) break;
    }
    if (busiest) hint = busiest.at - offsetMs;
    if (!best || (busiest && bar !== undefined && busiest.total < bar)) best = { offsetMs, busiest };
  }
  return best ?? { offsetMs: 0, busiest: null };
}

/** The largest bucket of a histogram (earliest on a tie); null when empty. */
export function peakOf(h: ReadonlyMap<number, number>): { at: number; fires: number } | null {
  let best: { at: number; fires: number } | null = null;
  for (const [at, fires] of h) if (!best || fires > best.fires || (fires === best.fires && at < best.at)) best = { at, fires };
  return best;
}

function hasSecondsField(spec: ScheduleSpec): boolean {
  const cron = (spec.cron ?? '').trim();
  return cron.startsWith('@') || cron.split(/\s+/).length >= 6;
}
