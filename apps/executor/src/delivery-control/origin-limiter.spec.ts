import { OriginLimiter } from './origin-limiter';

describe('OriginLimiter', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('grants up to the limit at once, then in FIFO order as slots are released', async () => {
    const l = new OriginLimiter(2);
    const a = await l.acquire(1_000);
    const b = await l.acquire(1_000);
    expect(a && b).toBeTruthy();
    const order: string[] = [];
    const c = l.acquire(1_000).then((r) => (order.push('c'), r));
    const d = l.acquire(1_000).then((r) => (order.push('d'), r));
    expect(l.waiting).toBe(2);
    a!();
    a!(); // idempotent: frees one slot only
    await Promise.resolve();
    expect(order).toEqual(['c']);
    expect(l.inFlight).toBe(2);
    b!();
    expect(await d).toBeTruthy();
    expect(order).toEqual(['c', 'd']);
    expect(await c).toBeTruthy();
  });

  it('ramps a new origin up: start calls at once, doubled every step, waiters granted as it grows', async () => {
    let now = 0;
    const l = new OriginLimiter(10, () => now, { start: 2, stepMs: 100 });
    expect(l.currentLimit()).toBe(2);
    const first = await Promise.all([l.acquire(0), l.acquire(0)]);
    expect(first.every((r) => r !== null)).toBe(true);
    expect(await l.acquire(0)).toBeNull(); // 2 for now
    const waiting = Array.from({ length: 6 }, () => l.acquire(5_000));
    now = 100;
    jest.advanceTimersByTime(100);
    expect(l.inFlight).toBe(4);
    expect(l.waiting).toBe(4);
    now = 200;
    jest.advanceTimersByTime(100);
    expect(await Promise.all(waiting)).not.toContain(null);
    expect(l.inFlight).toBe(8);
    now = 10_000;
    expect(l.currentLimit()).toBe(10);
  });

  it('gives up after the longest wait (null), and with no wait allowed refuses at once', async () => {
    const l = new OriginLimiter(1);
    const held = await l.acquire(0);
    expect(held).not.toBeNull();
    expect(await l.acquire(0)).toBeNull();
    const waiting = l.acquire(500);
    jest.advanceTimersByTime(499);
    expect(l.waiting).toBe(1);
    jest.advanceTimersByTime(1);
    expect(await waiting).toBeNull();
    expect(l.waiting).toBe(0);
    held!();
    expect(l.inFlight).toBe(0);
  });
});
