import { coveringWindow, MaintenanceWindow, nextWindowStart, windowAt, windowLasts } from './maintenance-window';

const T = Date.UTC(2027, 0, 4, 2, 0, 0); // a Monday, 02:00 UTC
const base: MaintenanceWindow = { id: '1', app: 'a', timerIds: null, fromMs: T, toMs: T + 60_000, cron: null, durationMs: null, policy: 'skip' };
const nightly: MaintenanceWindow = { ...base, id: '2', fromMs: null, toMs: null, cron: '0 2 * * *', durationMs: 30 * 60_000 };

describe('maintenance windows', () => {
  it('a fixed window holds [from, to)', () => {
    expect(windowAt(base, T - 1)).toBeNull();
    expect(windowAt(base, T)).toEqual({ window: base, start: T, end: T + 60_000 });
    expect(windowAt(base, T + 59_999)?.end).toBe(T + 60_000);
    expect(windowAt(base, T + 60_000)).toBeNull();
  });

  it('a cron window opens at each start for durationMs', () => {
    expect(windowAt(nightly, T - 1)).toBeNull();
    expect(windowAt(nightly, T)).toMatchObject({ start: T, end: T + 1_800_000 });
    expect(windowAt(nightly, T + 1_799_999)).toMatchObject({ start: T });
    expect(windowAt(nightly, T + 1_800_000)).toBeNull();
    const nextDay = T + 86_400_000 + 5 * 60_000;
    expect(windowAt(nightly, nextDay)).toMatchObject({ start: T + 86_400_000, end: T + 86_400_000 + 1_800_000 });
    expect(nextWindowStart(nightly, T)).toBe(T + 86_400_000);
    expect(nextWindowStart(base, T)).toBeNull();
  });

  it('covers only the listed timers; a skip window wins over a defer one, else the one ending last', () => {
    const some = { ...base, id: '3', timerIds: ['7'], policy: 'defer' as const, toMs: T + 120_000 };
    expect(coveringWindow([some], '8', T)).toBeNull();
    expect(coveringWindow([some], '7', T)?.window.id).toBe('3');
    expect(coveringWindow([some, base], '7', T)?.window.id).toBe('1');
    const longer = { ...some, id: '4', toMs: T + 180_000 };
    expect(coveringWindow([some, longer], '7', T)?.end).toBe(T + 180_000);
  });

  it('a fixed window stops lasting at its end; a recurring one always lasts', () => {
    expect(windowLasts(base, T + 59_999)).toBe(true);
    expect(windowLasts(base, T + 60_000)).toBe(false);
    expect(windowLasts(nightly, T + 10 * 86_400_000)).toBe(true);
  });
});
