import { BURST_MAX_MS, InstantSends } from './instant-sends';

describe('InstantSends', () => {
  let now = 0;
  const clock = { now: () => now, sleep: async () => undefined };
  const T = 1_800_000_000_000;

  beforeEach(() => {
    now = T;
    jest.useFakeTimers();
  });
  afterEach(() => jest.useRealTimers());

  it("is busy until every call of the instant is answered, and resumes its waiters then", async () => {
    const sends = new InstantSends(clock);
    const answered = [sends.begin(T), sends.begin(T)];
    let idle = false;
    void sends.whenIdle(1_000).then(() => (idle = true));
    answered[0]();
    answered[0](); // once only
    await Promise.resolve();
    expect(sends.busy).toBe(true);
    expect(idle).toBe(false);
    answered[1]();
    await Promise.resolve();
    expect(sends.busy).toBe(false);
    expect(idle).toBe(true);
  });

  it('lets an instant whose calls are still unanswered BURST_MAX_MS after it count as over (a slow origin)', () => {
    const sends = new InstantSends(clock);
    const slow = sends.begin(T);
    now = T + BURST_MAX_MS - 1;
    expect(sends.busy).toBe(true);
    now = T + BURST_MAX_MS;
    expect(sends.busy).toBe(false);
    const next = sends.begin(T + 1_000);
    now = T + 1_000;
    expect(sends.busy).toBe(true);
    next();
    expect(sends.busy).toBe(false);
    slow();
  });

  it('ends a wait for idle after maxMs when calls stay unanswered', async () => {
    const sends = new InstantSends(clock);
    sends.begin(T);
    let idle = false;
    void sends.whenIdle(50).then(() => (idle = true));
    await jest.advanceTimersByTimeAsync(49);
    expect(idle).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(idle).toBe(true);
  });
});
