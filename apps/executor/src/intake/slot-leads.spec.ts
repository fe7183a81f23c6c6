import { Clock } from '@timer/platform';
import { FireLane } from './fire-lanes';
import { InstantWaits } from '../shared/instant-waits';
import { ROOMY_SLOT_LEAD_MS, SLOT_LEAD_MS, SlotLeads } from './slot-leads';

/** A clock whose sleeps end when the test moves it past them. */
class SteppedClock implements Clock {
  private sleeps: { until: number; end: () => void }[] = [];
  constructor(public at: number) {}
  now(): number {
    return this.at;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((end) => this.sleeps.push({ until: this.at + ms, end }));
  }
  async advanceTo(at: number): Promise<void> {
    this.at = at;
    const due = this.sleeps.filter((s) => s.until <= at);
    this.sleeps = this.sleeps.filter((s) => s.until > at);
    for (const s of due) s.end();
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  }
}

describe('SlotLeads', () => {
  const T = 10_000;

  function setup(size: number) {
    const clock = new SteppedClock(T - 450);
    const leads = new SlotLeads(new InstantWaits(clock), clock);
    const lane = new FireLane(size);
    const released: number[] = [];
    const wait = (n: number, runAt = T) => {
      for (let i = 0; i < n; i++) void leads.until(lane, runAt, 'app').then(() => released.push(clock.now()));
    };
    return { clock, leads, lane, released, wait };
  }

  it('lets the fires of an instant take their slots ROOMY_SLOT_LEAD_MS ahead when the lane has a slot for each', async () => {
    const s = setup(3);
    s.wait(3);
    await s.clock.advanceTo(T - ROOMY_SLOT_LEAD_MS - 1);
    expect(s.released).toEqual([]);
    await s.clock.advanceTo(T - ROOMY_SLOT_LEAD_MS);
    expect(s.released).toEqual([T - ROOMY_SLOT_LEAD_MS, T - ROOMY_SLOT_LEAD_MS, T - ROOMY_SLOT_LEAD_MS]);
  });

  it('holds them to SLOT_LEAD_MS ahead when more wait than the lane has free slots, counting the slots in use', async () => {
    const s = setup(3);
    s.wait(4);
    await s.clock.advanceTo(T - ROOMY_SLOT_LEAD_MS);
    expect(s.released).toEqual([]);
    await s.clock.advanceTo(T - SLOT_LEAD_MS);
    expect(s.released).toHaveLength(4);

    const busy = setup(3);
    let finish: () => void = () => undefined;
    void busy.lane.run(() => new Promise<void>((r) => (finish = r)));
    busy.wait(3);
    await busy.clock.advanceTo(T - ROOMY_SLOT_LEAD_MS);
    expect(busy.released).toEqual([]);
    await busy.clock.advanceTo(T - SLOT_LEAD_MS);
    expect(busy.released).toHaveLength(3);
    finish();
  });

  it('lets a fire arriving after the early point in at once when there is room; each instant decides for itself', async () => {
    const s = setup(2);
    s.wait(1);
    s.wait(3, T + 1_000);
    await s.clock.advanceTo(T - ROOMY_SLOT_LEAD_MS);
    expect(s.released).toEqual([T - ROOMY_SLOT_LEAD_MS]);
    await s.clock.advanceTo(T - 200);
    s.wait(1);
    await s.clock.advanceTo(T - 199);
    expect(s.released).toEqual([T - ROOMY_SLOT_LEAD_MS, T - 199]);
    await s.clock.advanceTo(T + 1_000 - ROOMY_SLOT_LEAD_MS);
    expect(s.released).toHaveLength(2); // three for two slots: held
    await s.clock.advanceTo(T + 1_000 - SLOT_LEAD_MS);
    expect(s.released).toHaveLength(5);
  });
});
