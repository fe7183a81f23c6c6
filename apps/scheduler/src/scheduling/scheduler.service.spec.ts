import { Logger } from '@nestjs/common';
import { SliceMessage } from '@timer/contracts';
import { HeldLock, LockOptions, MinuteState } from '@timer/redis';
import { Registry } from 'prom-client';
import { SchedulerConfig, SchedulerEnv } from '../config/scheduler.env';
import { SchedulerMetrics } from './scheduler.metrics';
import { Locks, SchedulerService } from './scheduler.service';
import { SlicePublisher } from './slice.publisher';
import { SliceStateStore } from './slice-state.store';

const M = 60_000;
const T0 = Date.UTC(2030, 0, 1, 10, 0);

class Clock {
  constructor(public t: number) {}
  now = () => this.t;
}

class FakeStore implements SliceStateStore {
  recorded = new Map<number, number>();
  done = new Set<string>();
  allDone = new Set<number>();
  stateCalls = 0;
  queried: number[] = [];
  constructor(private readonly defaultBuckets = 3) {}
  async buckets(minutes: number[]) {
    return minutes.map((m) => {
      if (!this.recorded.has(m)) this.recorded.set(m, this.defaultBuckets);
      return this.recorded.get(m) as number;
    });
  }
  async state(minutes: { minute: number; buckets: number }[]): Promise<MinuteState[]> {
    this.stateCalls++;
    this.queried = minutes.map((m) => m.minute);
    return minutes.map(({ minute, buckets }) => {
      const allDone = this.allDone.has(minute);
      const done = allDone ? [] : Array.from({ length: buckets }, (_, b) => this.done.has(`${minute}:${b}`));
      return { minute, buckets, allDone, done };
    });
  }
  async markMinuteDone(minute: number) {
    this.allDone.add(minute);
  }
}

/** Locks with leases on the fake clock. */
class FakeLocks implements Locks {
  held = new Map<string, { token: string; until: number }>();
  private n = 0;
  constructor(private readonly clock: Clock) {}
  async tryAcquire({ resource, ttlMs }: LockOptions): Promise<HeldLock | undefined> {
    const h = this.held.get(resource);
    if (h && h.until > this.clock.now()) return undefined;
    const token = `tok${++this.n}`;
    this.held.set(resource, { token, until: this.clock.now() + ttlMs });
    return {
      resource,
      token,
      extend: async () => false,
      release: async () => this.held.get(resource)?.token === token && this.held.delete(resource),
    };
  }
}

class FakePublisher implements SlicePublisher {
  sent: SliceMessage[] = [];
  fail = false;
  async publish(m: SliceMessage) {
    if (this.fail) throw new Error('broker down (injected)');
    this.sent.push(m);
  }
}

function setup(now: number, env: Partial<SchedulerEnv> = {}) {
  const clock = new Clock(now);
  const store = new FakeStore();
  const locks = new FakeLocks(clock);
  const publisher = new FakePublisher();
  const config = new SchedulerConfig(Object.assign(new SchedulerEnv(), { TIMER_SCHEDULER_LOOKBACK_MINUTES: 2, TIMER_SLICE_LEASE_MS: 30_000 }, env));
  const make = () => new SchedulerService(store, locks, publisher, clock, config, new SchedulerMetrics(new Registry()));
  return { clock, store, locks, publisher, service: make(), make };
}

const keys = (ms: SliceMessage[]) => ms.map((m) => `${(m.minute - T0) / M}:${m.bucket}`).sort();

describe('SchedulerService (fakes, fixed clock)', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  it('offers every bucket of every minute of the lookback once, with the lock token and the bucket count', async () => {
    const s = setup(T0 + 10_500);
    const r = await s.service.tick();
    expect(keys(r.offered)).toEqual(['-1:0', '-1:1', '-1:2', '-2:0', '-2:1', '-2:2', '0:0', '0:1', '0:2']);
    for (const m of r.offered) {
      expect(m.buckets).toBe(3);
      expect(m.lockToken).toBe(s.locks.held.get(`slice:${m.minute}:${m.bucket}`)?.token);
    }
    expect(s.publisher.sent).toHaveLength(9);
  });

  it('offers the next minute TIMER_SCHEDULER_LEAD_MS before it starts, not earlier', async () => {
    const early = setup(T0 + 54_000, { TIMER_SCHEDULER_LEAD_MS: 5_000 });
    expect((await early.service.tick()).offered.some((m) => m.minute === T0 + M)).toBe(false);
    early.clock.t = T0 + 55_000;
    const r = await early.service.tick();
    expect(keys(r.offered.filter((m) => m.minute === T0 + M))).toEqual(['1:0', '1:1', '1:2']);
  });

  it('publishes the current and next minute before the catch-up of past minutes, newest first', async () => {
    const s = setup(T0 + 56_000, { TIMER_SCHEDULER_LEAD_MS: 5_000 });
    await s.service.tick();
    const order = s.publisher.sent.map((m) => (m.minute - T0) / M);
    expect(order.slice(0, 6).sort()).toEqual([0, 0, 0, 1, 1, 1]);
    expect(order.slice(6)).toEqual([-1, -1, -1, -2, -2, -2]);
  });

  it('uses the recorded bucket count of a minute', async () => {
    const s = setup(T0);
    s.store.recorded.set(T0, 5);
    const r = await s.service.tick();
    expect(r.offered.filter((m) => m.minute === T0).map((m) => m.buckets)).toEqual([5, 5, 5, 5, 5]);
  });

  it('does not offer again within the lease; offers again after it when not done; never offers a done slice', async () => {
    const s = setup(T0 + 1000);
    await s.service.tick();
    s.clock.t += 1000;
    expect((await s.service.tick()).offered).toEqual([]);
    s.store.done.add(`${T0 - M}:1`);
    s.clock.t += 30_000; // leases expired
    const r = await s.service.tick();
    expect(keys(r.offered)).toEqual(['-1:0', '-1:2', '-2:0', '-2:1', '-2:2', '0:0', '0:1', '0:2']);
    expect(r.offered[0].lockToken).not.toBe(s.publisher.sent[0].lockToken);
  });

  it('two replicas offer each slice once', async () => {
    const s = setup(T0 + 1000);
    const other = s.make();
    const [a, b] = await Promise.all([s.service.tick(), other.tick()]);
    expect(a.offered.length + b.offered.length).toBe(9);
    expect(new Set(keys([...a.offered, ...b.offered])).size).toBe(9);
  });

  it('marks a past minute whose buckets are all done and skips it afterwards without asking Redis', async () => {
    const s = setup(T0 + 1000);
    for (let b = 0; b < 3; b++) s.store.done.add(`${T0 - 2 * M}:${b}`);
    const r = await s.service.tick();
    expect(r.offered.some((m) => m.minute === T0 - 2 * M)).toBe(false);
    expect(s.store.allDone.has(T0 - 2 * M)).toBe(true);
    await s.service.tick();
    expect(s.store.queried).toEqual([T0 - M, T0]);
  });

  it('a done-all marker written elsewhere skips the minute', async () => {
    const s = setup(T0 + 1000);
    s.store.allDone.add(T0 - M);
    const r = await s.service.tick();
    expect(r.offered.some((m) => m.minute === T0 - M)).toBe(false);
  });

  it('releases the lock when publishing fails, so the next tick offers the slice again', async () => {
    const s = setup(T0 + 1000, { TIMER_SCHEDULER_LOOKBACK_MINUTES: 1 });
    s.publisher.fail = true;
    const r = await s.service.tick();
    expect(r).toMatchObject({ offered: [], failed: 6 });
    expect(s.locks.held.size).toBe(0);
    s.publisher.fail = false;
    s.clock.t += 1000;
    expect((await s.service.tick()).offered).toHaveLength(6);
  });

  it('offers an old slice that nobody finished (downtime), until the lookback ends', async () => {
    // Unpaced here (every past slice at once): the pacing has a test of its own below.
    const s = setup(T0, { TIMER_SCHEDULER_LOOKBACK_MINUTES: 60, TIMER_SCHEDULER_CATCHUP_SLICES: 1_000 });
    const r = await s.service.tick();
    expect(r.offered.filter((m) => m.minute === T0 - 30 * M)).toHaveLength(3);
    expect(r.offered.filter((m) => m.minute === T0 - 60 * M)).toHaveLength(3);
    expect(r.offered.filter((m) => m.minute < T0 - 60 * M)).toHaveLength(0);
    expect(r.offered).toHaveLength(61 * 3);
    expect(s.store.stateCalls).toBe(1);
  });

  it('paces the catch-up: at most TIMER_SCHEDULER_CATCHUP_SLICES past slices held at once, newest first', async () => {
    const s = setup(T0 + 1_000, { TIMER_SCHEDULER_LOOKBACK_MINUTES: 60, TIMER_SCHEDULER_CATCHUP_SLICES: 4 });
    const first = await s.service.tick();
    // The current minute in full, then 4 past slices: the newest minute's 3 and one of the next.
    expect(keys(first.offered.filter((m) => m.minute === T0))).toEqual(['0:0', '0:1', '0:2']);
    expect(keys(first.offered.filter((m) => m.minute < T0))).toEqual(['-1:0', '-1:1', '-1:2', '-2:0']);
    // While those are walked (held), nothing more; once two are done, two more go out.
    s.clock.t += 1_000;
    expect((await s.service.tick()).offered).toEqual([]);
    for (const m of first.offered.filter((x) => x.minute === T0 - M).slice(0, 2)) {
      s.store.done.add(`${m.minute}:${m.bucket}`);
      s.locks.held.delete(`slice:${m.minute}:${m.bucket}`);
    }
    s.clock.t += 1_000;
    expect(keys((await s.service.tick()).offered)).toEqual(['-2:1', '-2:2']);
  });
});
