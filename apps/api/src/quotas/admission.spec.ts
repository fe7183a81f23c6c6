import { ScheduleSpec } from '@timer/schedule';
import { busiestWith, histogramOf, leastLoadedOffset, maxFiresPerMinuteBound, minGapBound, peakOf, smallestGap, spreadOffsets } from './admission';

const T = Date.UTC(2030, 0, 1, 10, 0, 0);
const spec = (s: Omit<ScheduleSpec, 'timeZone'>): ScheduleSpec => ({ timeZone: 'UTC', ...s });

describe('admission arithmetic', () => {
  it('bounds fires per minute and the gap without evaluating the schedule', () => {
    expect(maxFiresPerMinuteBound(spec({ every: 1_000 }))).toBe(60);
    expect(maxFiresPerMinuteBound(spec({ every: 7_000 }))).toBe(9);
    expect(maxFiresPerMinuteBound(spec({ cron: '*/5 * * * * *' }))).toBe(60);
    expect(maxFiresPerMinuteBound(spec({ cron: '*/5 * * * *' }))).toBe(1);
    expect(maxFiresPerMinuteBound(spec({ runAt: T }))).toBe(1);
    expect(minGapBound(spec({ every: 30_000 }))).toBe(30_000);
    expect(minGapBound(spec({ cron: '0 * * * * *' }))).toBe(1_000);
    expect(minGapBound(spec({ cron: '0 * * * *' }))).toBe(60_000);
    expect(minGapBound(spec({ runAt: T }))).toBe(Infinity);
  });

  it('finds a cron\'s smallest gap and where it is, and none for a one-shot', () => {
    // 10:00:00 and 10:00:02 every hour: 2 s apart once an hour.
    expect(smallestGap({ cron: '0,2 0 * * * *', timeZone: 'UTC' }, T + 1)).toEqual({ gapMs: 2_000, at: T + 3_600_000 });
    expect(smallestGap({ cron: '*/15 * * * * *', timeZone: 'UTC' }, T)).toEqual({ gapMs: 15_000, at: T });
    expect(smallestGap(spec({ runAt: T + 5_000 }), T)).toBeNull();
  });

  it('adds a candidate to the load only where it fires, without counting its own stored fires twice', () => {
    const minute = 60_000;
    const existing = new Map([
      [T, 50],
      [T + minute, 10],
      [T + 2 * minute, 80],
    ]);
    // The candidate fires in the first two minutes only: the 80 of the third minute is not its business.
    const added = histogramOf([T + 1_000, T + 2_000, T + minute + 5], minute);
    expect(added).toEqual(new Map([[T, 2], [T + minute, 1]]));
    expect(busiestWith(existing, added)).toEqual({ at: T, existing: 50, added: 2, total: 52 });
    expect(busiestWith(existing, added, new Map([[T, 45]]))).toEqual({ at: T + minute, existing: 10, added: 1, total: 11 });
    expect(busiestWith(existing, new Map())).toBeNull();
    expect(peakOf(existing)).toEqual({ at: T + 2 * minute, fires: 80 });
    expect(peakOf(new Map())).toBeNull();
  });

  it('spreads over whole seconds below jitterMs (offset 0 only under a second)', () => {
    expect(spreadOffsets(1)).toEqual([0]);
    expect(spreadOffsets(1_000)).toEqual([0]);
    expect(spreadOffsets(1_001)).toEqual([0, 1_000]);
    expect(spreadOffsets(3_000)).toEqual([0, 1_000, 2_000]);
    expect(spreadOffsets(3_600_000)).toHaveLength(3_600);
  });

  it('picks the offset whose busiest second is lowest, the smallest on a tie, the same every time', () => {
    const s = (k: number) => T + k * 1_000;
    // Load per second from T: 5 5 1 4 0 3 (and 0 after).
    const load = new Map([
      [s(0), 5],
      [s(1), 5],
      [s(2), 1],
      [s(3), 4],
      [s(5), 3],
    ]);
    // The candidate fires at T and T + 2 s.
    const added = histogramOf([s(0), s(2)], 1_000);
    const offsets = spreadOffsets(5_000);
    // +0: max(6, 2) = 6; +1 s: max(6, 5) = 6; +2 s: max(2, 1) = 2; +3 s: max(5, 4) = 5; +4 s: max(1, 1) = 1.
    expect(leastLoadedOffset(load, added, new Map(), offsets)).toEqual({ offsetMs: 4_000, busiest: { at: s(4), existing: 0, added: 1, total: 1 } });
    expect(leastLoadedOffset(load, added, new Map(), offsets)).toEqual(leastLoadedOffset(new Map(load), new Map(added), new Map(), [...offsets]));
    // Within 4 s, +2 s is the least loaded.
    expect(leastLoadedOffset(load, added, new Map(), spreadOffsets(4_000)).offsetMs).toBe(2_000);
    // A tie (every offset puts 1 fire on an empty second): the smallest.
    expect(leastLoadedOffset(new Map(), added, new Map(), offsets)).toEqual({ offsetMs: 0, busiest: { at: s(0), existing: 0, added: 1, total: 1 } });
    const even = new Map([
      [s(0), 2],
      [s(1), 1],
      [s(2), 1],
    ]);
    expect(leastLoadedOffset(even, histogramOf([s(0)], 1_000), new Map(), offsets).offsetMs).toBe(3_000);
    expect(leastLoadedOffset(even, histogramOf([s(0)], 1_000), new Map(), spreadOffsets(3_000)).offsetMs).toBe(1_000);
  });

  it("does not count the candidate's own stored fires (an edit or enable), and reports the least loaded when none fits", () => {
    const s = (k: number) => T + k * 1_000;
    const load = new Map([
      [s(0), 3],
      [s(1), 3],
    ]);
    // Of the 3 at T + 1 s, 2 are this timer's own stored fires (at its current offset).
    const own = new Map([[s(1), 2]]);
    const added = histogramOf([s(0)], 1_000);
    expect(leastLoadedOffset(load, added, own, spreadOffsets(2_000))).toEqual({ offsetMs: 1_000, busiest: { at: s(1), existing: 1, added: 1, total: 2 } });
    // Full everywhere within the jitter: the least loaded is still over; the caller refuses with it.
    expect(leastLoadedOffset(load, added, new Map(), spreadOffsets(2_000))).toEqual({ offsetMs: 0, busiest: { at: s(0), existing: 3, added: 1, total: 4 } });
  });

  it('prunes without changing the answer: the same offset and busiest second as trying every offset in full', () => {
    let x = 12_345;
    const next = () => (x = (x * 48_271) % 2_147_483_647);
    for (let round = 0; round < 20; round++) {
      const load = new Map(Array.from({ length: 400 }, (_, i) => [T + i * 1_000, next() % 9] as [number, number]));
      const added = histogramOf(Array.from({ length: 60 }, () => T + (next() % 300) * 1_000), 1_000);
      const own = new Map([[T + (next() % 300) * 1_000, 3]]);
      const offsets = spreadOffsets(1_000 * (1 + (next() % 90)));
      const full = offsets
        .map((offsetMs) => ({ offsetMs, busiest: busiestWith(load, new Map([...added].map(([at, n]) => [at + offsetMs, n])), own) }))
        .reduce((a, b) => ((b.busiest?.total ?? 0) < (a.busiest?.total ?? 0) ? b : a));
      expect(leastLoadedOffset(load, added, own, offsets)).toEqual(full);
    }
  });
});
