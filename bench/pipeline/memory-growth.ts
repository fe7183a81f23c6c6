/** MB of each process at one instant, `t_s` seconds into the measured window. */
export interface MemorySample {
  t_s: number;
  mb: Record<string, number>;
}

/** One process's growth after the start-up period; see {@link memoryGrowth}. */
export interface ProcessGrowth {
  /** Median of the samples in the settled span. */
  settled_mb: number;
  /** Median of the samples in the end span. */
  end_mb: number;
  /** (end_mb - settled_mb) / settled_mb, in percent: the figure held against a bound. */
  growth_pct: number;
  /** The first sample at or after the start-up period, the largest after it, and that growth in percent. */
  at_settled_mb: number;
  peak_mb: number;
  peak_growth_pct: number;
}

export interface MemoryGrowth {
  /** The settled span [from, to) and the end span (from, to], in seconds of the window. */
  settled_s: [number, number];
  end_s: [number, number];
  by_process: Record<string, ProcessGrowth>;
}

/**
 * Growth of each process after `startupS` seconds, as the median of the window's end span against the
 * median of the span right after start-up. Both spans are `spanS` long, or half of what follows the
 * start-up when the window is shorter, so they never overlap. A GC sawtooth moves both medians alike
 * and shows as no growth; a steady leak shows as its slope times the distance between the spans (all
 * but one span of the run). The peak figure (largest later sample against the one at `startupS`) is
 * kept beside it: it counts a GC high point as growth. Null when less than two samples follow the
 * start-up.
 */
export function memoryGrowth(samples: readonly MemorySample[], startupS = 300, spanS = 300): MemoryGrowth | null {
  const after = samples.filter((s) => s.t_s >= startupS);
  if (after.length < 2) return null;
  const last = after[after.length - 1].t_s;
  const span = Math.min(spanS, (last - startupS) / 2);
  const settled = after.filter((s) => s.t_s < startupS + span);
  const end = after.filter((s) => s.t_s > last - span);
  // Two samples only (span too short for either to hold another): the first and the last.
  const settledSet = settled.length > 0 ? settled : [after[0]];
  const endSet = end.length > 0 ? end : [after[after.length - 1]];
  const byProcess: Record<string, ProcessGrowth> = {};
  for (const [k, atSettled] of Object.entries(after[0].mb)) {
    const s = median(settledSet.map((x) => x.mb[k]));
    const e = median(endSet.map((x) => x.mb[k]));
    if (s === null || e === null) continue;
    const peak = Math.max(...after.map((x) => x.mb[k] ?? -Infinity));
    byProcess[k] = {
      settled_mb: round1(s),
      end_mb: round1(e),
      growth_pct: pct(e, s),
      at_settled_mb: atSettled,
      peak_mb: peak,
      peak_growth_pct: pct(peak, atSettled),
    };
  }
  return { settled_s: [startupS, round1(startupS + span)], end_s: [round1(last - span), last], by_process: byProcess };
}

function median(values: (number | undefined)[]): number | null {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const pct = (to: number, from: number) => Math.round(((to - from) / from) * 1000) / 10;
