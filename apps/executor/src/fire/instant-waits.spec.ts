import { Clock } from '@timer/platform';
import { InstantWaits } from './instant-waits';

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
});
