import { memoryGrowth, MemorySample } from './memory-growth';

/** One sample every 10 s from 0 to `lastS`, process `p` at f(t). */
function series(lastS: number, f: (t: number) => number): MemorySample[] {
  const out: MemorySample[] = [];
  for (let t = 0; t <= lastS; t += 10) out.push({ t_s: t, mb: { p: f(t) } });
  return out;
}

describe('memoryGrowth', () => {
  it('reports a GC sawtooth without a trend as no growth, and its peak against the sample at 300 s apart', () => {
    // 300 -> 450 MB over 60 s, then back, for 30 minutes; the sample at 300 s is a low point.
    const g = memoryGrowth(series(1800, (t) => 300 + ((t % 60) / 60) * 150))!;
    expect(g.settled_s).toEqual([300, 600]);
    expect(g.end_s).toEqual([1500, 1800]);
    expect(Math.abs(g.by_process.p.growth_pct)).toBeLessThan(3);
    expect(g.by_process.p.at_settled_mb).toBe(300);
    expect(g.by_process.p.peak_mb).toBe(425);
    expect(g.by_process.p.peak_growth_pct).toBe(41.7);
  });

  it('shows a steady leak: 100 -> 130 MB over the 25 minutes after start-up, 23.5 % between the medians', () => {
    const g = memoryGrowth(series(1800, (t) => 100 + Math.max(0, t - 300) * (30 / 1500)))!;
    // Medians of [300, 600) and (1500, 1800]: at 445 s and 1,655 s, 102.9 and 127.1 MB.
    expect(g.by_process.p.settled_mb).toBe(102.9);
    expect(g.by_process.p.end_mb).toBe(127.1);
    expect(g.by_process.p.growth_pct).toBe(23.5);
    expect(g.by_process.p.peak_growth_pct).toBe(30);
  });

  it('shows a step that stays (a leak that stopped, or a larger heap) and ignores a short spike', () => {
    const step = memoryGrowth(series(1800, (t) => (t >= 1200 ? 240 : 160)))!;
    expect(step.by_process.p.growth_pct).toBe(50);
    const spike = memoryGrowth(series(1800, (t) => (t === 1700 ? 400 : 160)))!;
    expect(spike.by_process.p.growth_pct).toBe(0);
    expect(spike.by_process.p.peak_growth_pct).toBe(150);
  });

  it('halves the spans of a shorter window so they do not overlap', () => {
    const g = memoryGrowth(series(720, (t) => t))!;
    expect(g.settled_s).toEqual([300, 510]);
    expect(g.end_s).toEqual([510, 720]);
    // [300, 510) holds 300..500 (median 400), (510, 720] holds 520..720 (median 620).
    expect(g.by_process.p.settled_mb).toBe(400);
    expect(g.by_process.p.end_mb).toBe(620);
  });

  it('needs two samples after the start-up period, and skips a process missing from a span', () => {
    expect(memoryGrowth(series(300, () => 1))).toBeNull();
    expect(memoryGrowth(series(200, () => 1))).toBeNull();
    const two = memoryGrowth(series(310, () => 5))!;
    expect(two.by_process.p.growth_pct).toBe(0);
    const gone = memoryGrowth([
      { t_s: 300, mb: { a: 10, b: 20 } },
      { t_s: 600, mb: { a: 11 } },
    ])!;
    expect(Object.keys(gone.by_process)).toEqual(['a']);
    expect(gone.by_process.a.growth_pct).toBe(10);
  });
});
