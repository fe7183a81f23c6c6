import { firesFrom, planRange, planWindows } from './window-plan';

const H = 3_600_000;
const T0 = Date.UTC(2030, 0, 1, 10, 0); // a window start (60-min windows)

describe('window plan', () => {
  it('covers the current window and the next two when nothing was ever completed', () => {
    const plan = planWindows({ now: T0 + 25 * 60_000, windowMs: H, catchUpMs: H, bounds: null, completed: new Set() });
    expect(plan.windows).toEqual([
      { start: T0, end: T0 + H },
      { start: T0 + H, end: T0 + 2 * H },
      { start: T0 + 2 * H, end: T0 + 3 * H },
    ]);
    expect(plan.skipped).toBeUndefined();
  });

  it('skips completed windows and works only the new one in steady state', () => {
    const now = T0 + 5 * 60_000;
    const bounds = { first: T0 - 10 * H, last: T0 + H };
    const range = planRange(now, H, H, bounds);
    expect(range).toEqual({ from: T0 - H, to: T0 + 2 * H });
    const plan = planWindows({ now, windowMs: H, catchUpMs: H, bounds, completed: new Set([T0 - H, T0, T0 + H]) });
    expect(plan.windows.map((w) => w.start)).toEqual([T0 + 2 * H]);
  });

  it('does not reach before the first window ever completed (a fresh deployment)', () => {
    // First start at 10:25 completed 10:00, 11:00, 12:00; a tick at 11:05 must not migrate 09:00 or 10:00.
    const plan = planWindows({ now: T0 + H + 5 * 60_000, windowMs: H, catchUpMs: H, bounds: { first: T0, last: T0 + 2 * H }, completed: new Set([T0, T0 + H, T0 + 2 * H]) });
    expect(plan.windows.map((w) => w.start)).toEqual([T0 + 3 * H]);
  });

  it('fills a gap left behind a later completed window', () => {
    const plan = planWindows({ now: T0 + 60_000, windowMs: H, catchUpMs: H, bounds: { first: T0 - 5 * H, last: T0 + 2 * H }, completed: new Set([T0 - H, T0 + 2 * H]) });
    expect(plan.windows.map((w) => w.start)).toEqual([T0, T0 + H]);
  });

  it('after long downtime starts at the catch-up horizon and reports the skipped windows', () => {
    const now = T0 + 10 * 60_000;
    const plan = planWindows({ now, windowMs: H, catchUpMs: H, bounds: { first: T0 - 50 * H, last: T0 - 20 * H }, completed: new Set() });
    expect(plan.windows.map((w) => w.start)).toEqual([T0 - H, T0, T0 + H, T0 + 2 * H]);
    expect(plan.skipped).toEqual({ from: T0 - 19 * H, to: T0 - H });
  });

  it('with no catch-up covers only the current window onwards', () => {
    const plan = planWindows({ now: T0 + 1, windowMs: H, catchUpMs: 0, bounds: { first: T0 - 50 * H, last: T0 - 20 * H }, completed: new Set() });
    expect(plan.windows.map((w) => w.start)).toEqual([T0, T0 + H, T0 + 2 * H]);
  });

  it('aligns other window lengths to UTC multiples', () => {
    const plan = planWindows({ now: Date.UTC(2030, 0, 1, 10, 17), windowMs: 15 * 60_000, catchUpMs: 0, bounds: null, completed: new Set() });
    expect(plan.windows.map((w) => new Date(w.start).toISOString())).toEqual(['2030-01-01T10:15:00.000Z', '2030-01-01T10:30:00.000Z', '2030-01-01T10:45:00.000Z']);
  });

  it('starts a timer fires at the latest of its next fire (the window start when not known), last change, catch-up horizon', () => {
    const w = { start: T0, end: T0 + H };
    expect(firesFrom(w, 0, T0 - 5 * H, T0 - 2 * H, H)).toBe(T0); // future window, old timer, next fire not known
    expect(firesFrom(w, T0 + 17 * 60_000, T0 - 5 * H, T0 - 2 * H, H)).toBe(T0 + 17 * 60_000); // its next fire
    expect(firesFrom(w, null, T0 + 20 * 60_000, T0 + 30 * 60_000, H)).toBe(T0 + 20 * 60_000); // enabled mid-window
    expect(firesFrom(w, T0 - 2 * H, T0 - 5 * H, T0 + 10 * 60_000, H)).toBe(T0 - 50 * 60_000); // an earlier window not expanded for it
    expect(firesFrom(w, T0 - 5 * H, T0 - 5 * H, T0 + 90 * 60_000, H)).toBe(T0 + 30 * 60_000); // late run: horizon
    expect(firesFrom(w, 0, NaN, T0, H)).toBe(T0);
  });
});
