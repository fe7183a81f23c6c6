import { Clock } from '@timer/platform';
import { InstantWaits, QUIET_FROM_MS, QUIET_SPAN_MS, quietAt, RELEASE_CHUNK } from './instant-waits';

/** A clock whose sleeps end when the test says so. */
class HeldClock implements Clock {
  readonly sleeps: { ms: number; end: () => void }[] = [];
  constructor(private readonly at: number) {}
  now(): number {
    return this.at;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((end) => this.sleeps.push({ ms, end }));
  }
}

describe('InstantWaits', () => {
  it('puts work off to the quiet part of each second: now when in it, else its next start', async () => {
    const end = QUIET_FROM_MS + QUIET_SPAN_MS;
    expect(quietAt(5_000)).toBe(5_000 + QUIET_FROM_MS);
    expect(quietAt(5_000 + QUIET_FROM_MS - 1)).toBe(5_000 + QUIET_FROM_MS);
    expect(quietAt(5_000 + QUIET_FROM_MS)).toBeUndefined();
    expect(quietAt(5_000 + end - 1)).toBeUndefined();
    expect(quietAt(5_000 + end)).toBe(6_000 + QUIET_FROM_MS);
    expect(quietAt(5_999)).toBe(6_000 + QUIET_FROM_MS);
    const clock = new HeldClock(5_900);
    const waits = new InstantWaits(clock);
    const w = waits.quiet();
    expect(clock.sleeps.map((x) => x.ms)).toEqual([100 + QUIET_FROM_MS]);
    clock.sleeps[0].end();
    await w;
    await new InstantWaits(new HeldClock(5_000 + QUIET_FROM_MS)).quiet(); // in it: no sleep
  });

  it('waits for one instant with one sleep, however many wait for it, and for each instant apart', async () => {
    const clock = new HeldClock(1_000);
    const waits = new InstantWaits(clock);
    let done = 0;
    const all = [waits.until(1_500), waits.until(1_500), waits.until(1_500), waits.until(1_700)].map((w) => w.then(() => done++));
    expect(clock.sleeps.map((s) => s.ms)).toEqual([500, 700]);
    clock.sleeps[0].end();
    await Promise.all(all.slice(0, 3));
    expect(done).toBe(3);
    clock.sleeps[1].end();
    await Promise.all(all);
    expect(done).toBe(4);
  });

  it('resolves at once for an instant past or now, and sleeps again for an instant after its wait ended', async () => {
    const clock = new HeldClock(1_000);
    const waits = new InstantWaits(clock);
    await waits.until(1_000);
    await waits.until(900);
    expect(clock.sleeps).toHaveLength(0);
    const first = waits.until(1_200);
    clock.sleeps[0].end();
    await first;
    void waits.until(1_200); // the clock did not move: a new wait, not the ended one
    expect(clock.sleeps).toHaveLength(2);
  });

  it('releases the groups of one instant in turns, the smallest first, RELEASE_CHUNK per event-loop turn', async () => {
    const clock = new HeldClock(1_000);
    const waits = new InstantWaits(clock);
    const order: string[] = [];
    const heavy = Array.from({ length: 3 * RELEASE_CHUNK }, (_, i) => waits.until(1_500, 'a').then(() => order.push(`a${i}`)));
    const light = Array.from({ length: 3 }, (_, i) => waits.until(1_500, 'b').then(() => order.push(`b${i}`)));
    expect(clock.sleeps).toHaveLength(1);
    clock.sleeps[0].end();
    await new Promise((r) => setImmediate(r)); // the sleep's turn and the first chunk's
    expect(order.slice(0, 6)).toEqual(['b0', 'a0', 'b1', 'a1', 'b2', 'a2']);
    expect(order.length).toBeLessThanOrEqual(RELEASE_CHUNK);
    await Promise.all([...heavy, ...light]);
    expect(order).toHaveLength(3 * RELEASE_CHUNK + 3);
  });

  it('releases a lone group all at once', async () => {
    const clock = new HeldClock(1_000);
    const waits = new InstantWaits(clock);
    let done = 0;
    const all = Array.from({ length: 2 * RELEASE_CHUNK }, () => waits.until(1_500, 'a').then(() => done++));
    clock.sleeps[0].end();
    await all[0];
    expect(done).toBe(2 * RELEASE_CHUNK);
  });
});
