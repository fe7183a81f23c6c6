import { Logger } from '@nestjs/common';
import { FireRef, MigrateRangeMessage, minuteOf, NEAR_NOW_MS, TaskMessage } from '@timer/contracts';
import { DueCursor, NewTask, NextFireAdvance, TimerEntity } from '@timer/dal';
import { bucketsForFires, HeldLock, LockOptions } from '@timer/redis';
import { Registry } from 'prom-client';
import { MigratorConfig, MigratorEnv } from '../config/migrator.env';
import { MigratorMetrics } from './migrator.metrics';
import { DueFirePublisher, FireIndexer, FireRows, FireWriter } from '@timer/fire';
import { BucketRecords, ChangedTimers, ExpandCounts, Locks, MigratorService, RangeCoordination, TimerSource, WindowStore } from './migrator.service';

/** Ranges over an in-memory queue that the test hands to replicas, and done markers in a map. */
class FakeRanges implements RangeCoordination {
  queue: MigrateRangeMessage[] = [];
  published: MigrateRangeMessage[] = [];
  readonly doneMap = new Map<string, ExpandCounts>();
  constructor(private readonly timers: TimerEntity[]) {}
  async boundaries(size: number, beforeMs: number) {
    const ids = this.timers.filter((t) => Number(t.nextFireAt) > 0 && Number(t.nextFireAt) < beforeMs).map((t) => t.id);
    const out: string[] = [];
    for (let i = size - 1; i < ids.length - 1; i += size) out.push(ids[i]);
    return out;
  }
  async publish(r: MigrateRangeMessage) {
    this.queue.push(r);
    this.published.push(r);
  }
  async done(r: MigrateRangeMessage) {
    return this.doneMap.get(JSON.stringify(r)) ?? null;
  }
  async markDone(r: MigrateRangeMessage, counts: ExpandCounts) {
    this.doneMap.set(JSON.stringify(r), counts);
  }
}

const H = 3_600_000;
const T0 = Date.UTC(2030, 0, 1, 10, 0);

class FakeWindows implements WindowStore {
  done = new Map<number, number>();
  async completedBounds() {
    if (this.done.size === 0) return null;
    const starts = [...this.done.keys()];
    return { first: Math.min(...starts), last: Math.max(...starts) };
  }
  async completedBetween(from: number, to: number) {
    return [...this.done.keys()].filter((s) => s >= from && s <= to).sort((a, b) => a - b);
  }
  async isCompleted(start: number) {
    return this.done.has(start);
  }
  async markCompleted(start: number, end: number) {
    if (!this.done.has(start)) this.done.set(start, end);
  }
}

/** The timers table: next_fire_at selection, advances at the version read, 0 resolved. Reads return copies, as rows do. */
class FakeTimers implements TimerSource {
  pages: (string | null)[] = [];
  timers: TimerEntity[];
  constructor(timers: TimerEntity[]) {
    this.timers = timers.map((t) => ({ ...t }));
  }
  async duePage(beforeMs: number, after: DueCursor | null, limit: number, ids?: { afterId: string | null; upToId?: string }) {
    this.pages.push(after?.id ?? null);
    const key = (t: { nextFireAt: number | null; id: string }) => [Number(t.nextFireAt), BigInt(t.id)] as const;
    const before = (a: readonly [number, bigint], b: readonly [number, bigint]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
    return this.timers
      .filter((t) => t.nextFireAt !== null && t.nextFireAt > 0 && t.nextFireAt < beforeMs)
      .filter((t) => after === null || before(key(after), key(t)))
      .filter((t) => (ids?.afterId == null || BigInt(t.id) > BigInt(ids.afterId)) && (ids?.upToId === undefined || BigInt(t.id) <= BigInt(ids.upToId)))
      .sort((a, b) => (before(key(a), key(b)) ? -1 : 1))
      .slice(0, limit)
      .map((t) => ({ ...t }));
  }
  async advanceNextFire(advances: NextFireAdvance[]) {
    let n = 0;
    for (const a of advances) {
      const t = this.timers.find((x) => x.id === a.id)!;
      if (t.version === a.version && (a.nextFireAt === null || (t.nextFireAt !== null && t.nextFireAt < a.nextFireAt))) {
        t.nextFireAt = a.nextFireAt;
        n++;
      }
    }
    return n;
  }
  async resolveUnknownNextFire(fromMs: number, limit: number) {
    const unknown = this.timers.filter((t) => t.nextFireAt === 0).slice(0, limit);
    for (const t of unknown) t.nextFireAt = fromMs;
    return unknown.length;
  }
  nextFireOf(id: string) {
    return this.timers.find((t) => t.id === id)!.nextFireAt;
  }
}

class FakeTasks implements FireRows {
  rows = new Set<string>();
  calls = 0;
  failOnCall: number | undefined;
  async insertIgnore(rows: NewTask[]) {
    this.calls++;
    if (this.calls === this.failOnCall) throw new Error('mysql went away (injected)');
    let n = 0;
    for (const r of rows) {
      const k = `${r.timerId}-${r.runAt}`;
      if (!this.rows.has(k)) n++;
      this.rows.add(k);
    }
    return n;
  }
}

/** Index entries, and bucket counts recorded once per minute (SET NX) from fires, as SliceIndex does. */
class FakeIndex implements FireIndexer, BucketRecords {
  members = new Set<string>();
  buckets = new Map<number, number>();
  /** Minutes that had an entry added before their count was recorded. */
  addedUnrecorded = new Set<number>();
  /** Minutes recorded when the first entry was added. */
  recordedAtFirstAdd: number | undefined;
  async add(fires: FireRef[]) {
    this.recordedAtFirstAdd ??= this.buckets.size;
    for (const f of fires) {
      if (!this.buckets.has(minuteOf(f.runAt))) this.addedUnrecorded.add(minuteOf(f.runAt));
      this.members.add(`${f.timerId}-${f.runAt}`);
    }
  }
  policy = { defaultBuckets: 10, bucketFires: 200, maxBuckets: 64 };
  bucketsFor(fires: number) {
    return bucketsForFires(fires, this.policy);
  }
  async recordBuckets(fires: ReadonlyMap<number, number>) {
    for (const [m, n] of fires) if (!this.buckets.has(m)) this.buckets.set(m, this.bucketsFor(n));
    return new Map([...fires.keys()].map((m) => [m, this.buckets.get(m)!]));
  }
  async recordedBuckets(minute: number) {
    return this.buckets.get(minute) ?? null;
  }
}

/** Task messages of fires already due, as FireWriter.publishDue sends them. */
class FakePublisher implements DueFirePublisher {
  published: string[] = [];
  async publish(task: TaskMessage) {
    this.published.push(task.fireId);
  }
  async publishBatch(tasks: readonly TaskMessage[]) {
    for (const t of tasks) this.published.push(t.fireId);
  }
}

/** Records which pages the fence looked at again, and over which range. */
class FakeChanged implements ChangedTimers {
  calls: { ids: string[]; from: number; to: number }[] = [];
  async recheck(page: TimerEntity[], from: number, to: number) {
    this.calls.push({ ids: page.map((t) => t.id), from, to });
    return 0;
  }
}

class FakeLocks implements Locks {
  held = new Map<string, string>();
  acquired: string[] = [];
  async tryAcquire({ resource }: LockOptions): Promise<HeldLock | undefined> {
    if (this.held.has(resource)) return undefined;
    const token = `${resource}#${this.acquired.length}`;
    this.held.set(resource, token);
    this.acquired.push(resource);
    return {
      resource,
      token,
      extend: async () => this.held.get(resource) === token,
      release: async () => this.held.get(resource) === token && this.held.delete(resource),
    };
  }
}

function timer(id: string, fields: Partial<TimerEntity>): TimerEntity {
  return { id, app: 'a', cron: null, runAt: null, timeZone: 'UTC', updatedAt: new Date(T0 - 24 * H), version: 1, nextFireAt: 0, ...fields } as TimerEntity;
}

function setup(timers: TimerEntity[], now: number, env: Partial<MigratorEnv> = {}) {
  const deps = {
    windows: new FakeWindows(),
    timers: new FakeTimers(timers),
    tasks: new FakeTasks(),
    index: new FakeIndex(),
    locks: new FakeLocks(),
    publisher: new FakePublisher(),
    changed: new FakeChanged(),
  };
  const clock = { now: () => now };
  const config = new MigratorConfig(Object.assign(new MigratorEnv(), { TIMER_MIGRATOR_PAGE_SIZE: 2 }, env));
  const writer = new FireWriter(deps.tasks, deps.index, deps.publisher, clock);
  const metrics = new MigratorMetrics(new Registry());
  const service = new MigratorService(deps.windows, deps.timers, writer, deps.locks, clock, config, metrics, deps.changed, deps.index);
  return { ...deps, service, clock, metrics };
}

describe('MigratorService: a window split into ranges across replicas (fakes)', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  const every10Min = Array.from({ length: 7 }, (_, i) => timer(String(i + 1), { cron: '0 */10 * * * *', nextFireAt: T0 }));

  function replicas(timers: TimerEntity[]) {
    const shared = { windows: new FakeWindows(), timers: new FakeTimers(timers), tasks: new FakeTasks(), index: new FakeIndex(), ranges: new FakeRanges(timers), publisher: new FakePublisher() };
    const config = new MigratorConfig(Object.assign(new MigratorEnv(), { TIMER_MIGRATOR_PAGE_SIZE: 2, TIMER_MIGRATOR_RANGE_TIMERS: 3 }));
    const make = () =>
      new MigratorService(
        shared.windows,
        shared.timers,
        new FireWriter(shared.tasks, shared.index, shared.publisher, { now: () => T0 + 60_000 }),
        new FakeLocks(),
        { now: () => T0 + 60_000 },
        config,
        new MigratorMetrics(new Registry()),
        new FakeChanged(),
        shared.index,
        shared.ranges,
      );
    return { ...shared, a: make(), b: make() };
  }

  it('publishes one range per 3 timers, lets another replica expand them, and completes the window once all are done', async () => {
    const r = replicas(every10Min);
    const window = { start: T0, end: T0 + H };
    const coordinating = r.a.migrateWindow(window);
    // Replica b works the ranges as they arrive.
    const worked: string[] = [];
    while (worked.length < 3) {
      const next = r.ranges.queue.shift();
      if (!next) {
        await new Promise((res) => setTimeout(res, 5));
        continue;
      }
      expect(await r.b.migrateRange(next)).toBe('migrated');
      worked.push(`(${next.fromTimerId},${next.toTimerId}]`);
    }
    expect(worked).toEqual(['(0,3]', '(3,6]', '(6,]']);
    expect(await coordinating).toMatchObject({ status: 'completed', timers: 7, fires: 42, inserted: 42 });
    expect(r.tasks.rows.size).toBe(42); // 7 timers x 6 fires an hour
    // The 7 fires at T0 are already due at T0 + 1 min: published (the walk is past them), not indexed.
    expect(new Set(r.publisher.published)).toEqual(new Set(every10Min.map((t) => `${t.id}-${T0}`)));
    expect(r.index.members.size).toBe(35);
    expect(r.windows.done.has(T0)).toBe(true);
    // A late duplicate of a range message does nothing.
    expect(await r.b.migrateRange(r.ranges.published[0])).toBe('skipped');
  });

  it('republishes only the ranges not done when a window is retried', async () => {
    const r = replicas(every10Min);
    const window = { start: T0, end: T0 + H };
    const first = r.a.migrateWindow(window);
    while (r.ranges.queue.length < 3) await new Promise((res) => setTimeout(res, 5));
    await r.b.migrateRange(r.ranges.queue.shift()!);
    r.a.stop(); // the lock holder shuts down before the other two ranges are done
    expect(await first).toMatchObject({ status: 'failed' });
    expect(r.windows.done.has(T0)).toBe(false);
    r.ranges.queue = [];
    const retry = r.b.migrateWindow(window);
    while (r.ranges.queue.length < 2) await new Promise((res) => setTimeout(res, 5));
    expect(r.ranges.queue.map((m) => m.fromTimerId)).toEqual(['3', '6']);
    for (const m of r.ranges.queue.splice(0)) await r.b.migrateRange(m);
    expect(await retry).toMatchObject({ status: 'completed', timers: 7, fires: 42 });
  });

  it('expands a window that fits one range itself, publishing nothing', async () => {
    const r = replicas(every10Min.slice(0, 3));
    expect(await r.a.migrateWindow({ start: T0, end: T0 + H })).toMatchObject({ status: 'completed', timers: 3, fires: 18 });
    expect(r.ranges.published).toEqual([]);
  });
});

describe('MigratorService (fakes, fixed clock)', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  it('creates every fire of the current and the next two windows, rows and index alike, page by page', async () => {
    const timers = [
      timer('1', { cron: '0 */15 * * * *' }), // every 15 minutes (6 fields: seconds first)
      timer('2', { cron: '30 * * * *' }), // minute 30 of every hour
      timer('3', { runAt: T0 + H + 123 }), // one-shot in the next window
      timer('4', { runAt: T0 - 1 }), // one-shot in the past: nothing
      timer('5', { cron: 'not a cron' }), // broken schedule: skipped, the rest goes on
    ];
    const s = setup(timers, T0 + 20 * 60_000);
    const outcomes = await s.service.tick();
    expect(outcomes.map((o) => [o.window.start, o.status])).toEqual([
      [T0, 'completed'],
      [T0 + H, 'completed'],
      [T0 + 2 * H, 'completed'],
    ]);
    const expected = new Set<string>();
    for (let t = T0; t < T0 + 3 * H; t += 15 * 60_000) expected.add(`1-${t}`);
    for (let h = 0; h < 3; h++) expected.add(`2-${T0 + h * H + 30 * 60_000}`);
    expected.add(`3-${T0 + H + 123}`);
    expect(s.tasks.rows).toEqual(expected);
    // Fires due by now + NEAR_NOW_MS are published at once (the walk may be past them); the rest indexed.
    const dueBy = T0 + 20 * 60_000 + NEAR_NOW_MS;
    const runAt = (id: string) => Number(id.split('-')[1]);
    expect(new Set(s.publisher.published)).toEqual(new Set([...expected].filter((id) => runAt(id) <= dueBy)));
    expect(s.index.members).toEqual(new Set([...expected].filter((id) => runAt(id) > dueBy)));
    expect([...s.windows.done.keys()]).toEqual([T0, T0 + H, T0 + 2 * H]);
    // Keyset paging with page size 2: after null, '2', '4' per window.
    expect(s.timers.pages.slice(0, 3)).toEqual([null, '2', '4']);
    expect(s.locks.held.size).toBe(0);
    // After each page's fires are written, the page is checked for timers edited meanwhile (the fence),
    // over the window from now on.
    expect(s.changed.calls.slice(0, 3)).toEqual([
      { ids: ['1', '2'], from: T0 + 20 * 60_000, to: T0 + H },
      { ids: ['3', '4'], from: T0 + 20 * 60_000, to: T0 + H },
      { ids: ['5'], from: T0 + 20 * 60_000, to: T0 + H },
    ]);
    // The next window reads only the timers with a fire in it, by next fire: 5 (broken, never advanced), 1, 3, 2.
    expect(s.changed.calls[3]).toEqual({ ids: ['5', '1'], from: T0 + H, to: T0 + 2 * H });
    expect(s.changed.calls[4]).toEqual({ ids: ['3', '2'], from: T0 + H, to: T0 + 2 * H });
    // The third window: the one-shot is done. Then the top-up finds only the broken timer behind.
    expect(s.changed.calls.slice(5).map((c) => c.ids)).toEqual([['5', '1'], ['2'], ['5']]);
    // Each advanced to its first fire after the last window; the past one-shot has none left.
    expect(['1', '2', '3', '4', '5'].map((id) => s.timers.nextFireOf(id))).toEqual([T0 + 3 * H, T0 + 3 * H + 30 * 60_000, null, null, T0]);
  });

  it('a second tick adds nothing; the next window is added when the clock moves on', async () => {
    const s = setup([timer('1', { cron: '0 * * * *' })], T0);
    await s.service.tick();
    const before = s.tasks.rows.size;
    expect(await s.service.tick()).toEqual([]);
    expect(s.tasks.rows.size).toBe(before);
    const later = new MigratorService(
      s.windows,
      s.timers,
      new FireWriter(s.tasks, s.index, s.publisher, { now: () => T0 + H + 1 }),
      s.locks,
      { now: () => T0 + H + 1 },
      new MigratorConfig(new MigratorEnv()),
      new MigratorMetrics(new Registry()),
      s.changed,
      s.index,
    );
    const outcomes = await later.tick();
    expect(outcomes.map((o) => o.window.start)).toEqual([T0 + 3 * H]);
    expect(s.tasks.rows.has(`1-${T0 + 3 * H}`)).toBe(true);
  });

  it('tops up a timer enabled after its windows completed (enable wrote the near future only), from its next fire, once', async () => {
    const s = setup([timer('1', { cron: '0 * * * *' })], T0 + 10 * 60_000);
    await s.service.tick();
    // Enabled at T0 + 10 min with 3 minutes written: next_fire_at is where the enable stopped.
    const late = timer('9', { cron: '0 * * * * *', updatedAt: new Date(T0 + 10 * 60_000), nextFireAt: T0 + 13 * 60_000 });
    s.timers.timers.push(late);
    expect(await s.service.tick()).toEqual([]); // every window completed already
    const runAts = [...s.tasks.rows].filter((k) => k.startsWith('9-')).map((k) => Number(k.split('-')[1]));
    expect(Math.min(...runAts)).toBe(T0 + 13 * 60_000);
    expect(runAts.length).toBe(3 * 60 - 13); // every minute from there through the prepared windows
    expect(s.timers.nextFireOf('9')).toBe(T0 + 3 * H);
    expect(s.locks.held.size).toBe(0);
    const before = s.tasks.rows.size;
    await s.service.tick();
    expect(s.tasks.rows.size).toBe(before);
  });

  it('does not create fires before a timer was enabled mid-window', async () => {
    const s = setup([timer('7', { cron: '0 * * * * *', updatedAt: new Date(T0 + 30 * 60_000), nextFireAt: T0 })], T0 + 40 * 60_000);
    await s.service.migrateWindow({ start: T0, end: T0 + H });
    const runAts = [...s.tasks.rows].map((k) => Number(k.split('-')[1]));
    expect(runAts.length).toBe(30);
    expect(Math.min(...runAts)).toBe(T0 + 30 * 60_000);
  });

  it('reads only the timers with a fire before the window end and moves each to its first fire after it', async () => {
    const D = Date.UTC(2030, 0, 2);
    const s = setup(
      [
        timer('1', { cron: '0 0 * * * *', nextFireAt: T0 }), // hourly: fires in the window
        timer('2', { cron: '0 0 0 * * *', nextFireAt: D }), // daily: its next fire is tomorrow, not read
        timer('3', { cron: '0 30 * * * *', nextFireAt: T0 - 30 * 60_000 }), // the window before was not expanded for it
        timer('4', { cron: '0 0 * * * *', nextFireAt: null }), // no fire left
      ],
      T0 - 2 * H,
    );
    expect(await s.service.migrateWindow({ start: T0, end: T0 + H })).toMatchObject({ status: 'completed', timers: 2, fires: 3 });
    expect(s.tasks.rows).toEqual(new Set([`1-${T0}`, `3-${T0 - 30 * 60_000}`, `3-${T0 + 30 * 60_000}`]));
    expect(['1', '2', '3', '4'].map((id) => s.timers.nextFireOf(id))).toEqual([T0 + H, D, T0 + H + 30 * 60_000, null]);
    // The next window reads them again from there: nothing twice.
    expect(await s.service.migrateWindow({ start: T0 + H, end: T0 + 2 * H })).toMatchObject({ status: 'completed', timers: 2, fires: 2, inserted: 2 });
  });

  it('does not move a timer edited between its read and its write: the edit set its next fire', async () => {
    const s = setup([timer('1', { cron: '0 0 * * * *', nextFireAt: T0 })], T0 - 2 * H);
    const insert = s.tasks.insertIgnore.bind(s.tasks);
    s.tasks.insertIgnore = async (rows) => {
      Object.assign(s.timers.timers[0], { version: 2, nextFireAt: T0 + 3 * H }); // the api's edit commits here
      return insert(rows);
    };
    await s.service.migrateWindow({ start: T0, end: T0 + H });
    expect(s.timers.nextFireOf('1')).toBe(T0 + 3 * H);
    expect(s.changed.calls).toEqual([{ ids: ['1'], from: T0, to: T0 + H }]); // and the fence regenerates its window
  });

  it('resolves the timers whose next fire is not known to the first window not completed before expanding', async () => {
    const s = setup([timer('1', { cron: '0 0 * * * *' }), timer('2', { cron: '0 0 * * * *' })], T0 + 60_000);
    s.windows.done.set(T0, T0 + H);
    await s.service.tick();
    expect(s.tasks.rows).toEqual(new Set([`1-${T0 + H}`, `2-${T0 + H}`, `1-${T0 + 2 * H}`, `2-${T0 + 2 * H}`]));
    expect(s.timers.nextFireOf('1')).toBe(T0 + 3 * H);
  });

  it('leaves a window held by another replica alone', async () => {
    const s = setup([timer('1', { cron: '* * * * *' })], T0);
    await s.locks.tryAcquire({ resource: `migrate:${T0}`, ttlMs: 1000 });
    const outcomes = await s.service.tick();
    expect(outcomes.map((o) => o.status)).toEqual(['busy', 'completed', 'completed']);
    expect(s.windows.done.has(T0)).toBe(false);
    // No top-up beside a window another replica works: it reads the same timers.
    expect(s.locks.acquired).not.toContain('migrate:topup');
  });

  it('a failure mid-window leaves it incomplete; the next tick completes it without duplicates', async () => {
    const timers = [1, 2, 3, 4, 5].map((i) => timer(String(i), { cron: '0 * * * * *', nextFireAt: T0 }));
    const s = setup(timers, T0, { TIMER_WINDOW_MINUTES: 10 });
    s.tasks.failOnCall = 2; // fails after the first page
    const first = await s.service.migrateWindow({ start: T0, end: T0 + 600_000 });
    expect(first.status).toBe('failed');
    expect(s.windows.done.size).toBe(0);
    expect(s.tasks.rows.size).toBe(20);
    expect(s.locks.held.size).toBe(0);
    const second = await s.service.migrateWindow({ start: T0, end: T0 + 600_000 });
    // The first page's timers moved past the window once their fires were written: not read again.
    expect(second).toMatchObject({ status: 'completed', timers: 3, fires: 30, inserted: 30 });
    expect(s.tasks.rows.size).toBe(50);
    // Every row is indexed or, due at T0 already, published.
    expect(new Set([...s.index.members, ...s.publisher.published])).toEqual(s.tasks.rows);
    expect(new Set(s.publisher.published)).toEqual(new Set(timers.map((t) => `${t.id}-${T0}`)));
  });

  it('records each minute\'s bucket count from its fires before indexing any of them, once', async () => {
    // 450 timers fire at 10:05:00, one at 10:07:30: only 10:05 is heavy.
    const heavy = Array.from({ length: 450 }, (_, i) => timer(String(i + 1), { cron: '0 5 10 * * *', nextFireAt: T0 }));
    const light = timer('1000', { cron: '30 7 10 * * *', nextFireAt: T0 });
    const s = setup([...heavy, light], T0, { TIMER_WINDOW_MINUTES: 10, TIMER_MIGRATOR_PAGE_SIZE: 100 });
    expect(await s.service.migrateWindow({ start: T0, end: T0 + 600_000 })).toMatchObject({ status: 'completed', fires: 451 });
    expect(s.index.buckets.get(T0 + 5 * 60_000)).toBe(12); // 10 + floor(450 / 200)
    expect(s.index.buckets.get(T0 + 7 * 60_000)).toBe(10);
    expect(s.index.buckets.get(T0)).toBe(10);
    expect(s.index.buckets.size).toBe(10); // every minute of the window
    expect(s.index.addedUnrecorded).toEqual(new Set());
    expect(s.index.members.size).toBe(451);
    const observed = (await s.metrics.minuteBuckets.get()).values.find((v) => v.metricName === 'timer_migrator_minute_buckets_count');
    expect(observed?.value).toBe(10);
    // A re-run of the window (not completed) reads no timers for the counts: every minute is recorded.
    s.windows.done.clear();
    const pages = s.timers.pages.length;
    await s.service.migrateWindow({ start: T0, end: T0 + 600_000 });
    expect(s.timers.pages.length - pages).toBe(1); // the expansion's one page (every timer moved on)
    expect(s.index.buckets.get(T0 + 5 * 60_000)).toBe(12);
  });

  it('counts every planned window before it expands the first, so a window waiting behind an expansion is counted in time', async () => {
    const s = setup([timer('1', { cron: '0 * * * * *', nextFireAt: T0 })], T0, { TIMER_WINDOW_MINUTES: 10 });
    await s.service.tick();
    expect(s.index.recordedAtFirstAdd).toBe(30); // the 3 windows' minutes
    expect(s.index.addedUnrecorded).toEqual(new Set());
  });

  it('reads no timers to count when the maximum is the default (no count can change it)', async () => {
    const s = setup([timer('1', { cron: '0 * * * * *', nextFireAt: T0 })], T0, { TIMER_WINDOW_MINUTES: 10 });
    s.index.policy = { defaultBuckets: 10, bucketFires: 200, maxBuckets: 10 };
    await s.service.migrateWindow({ start: T0, end: T0 + 600_000 });
    expect(s.timers.pages).toEqual([null]); // the expansion's one page
    expect(s.index.buckets.size).toBe(0); // the first user records the default
  });

  it('keeps the count of a minute recorded before it planned the window (the scheduler, the api)', async () => {
    const heavy = Array.from({ length: 450 }, (_, i) => timer(String(i + 1), { cron: '0 5 10 * * *', nextFireAt: T0 }));
    const s = setup(heavy, T0, { TIMER_WINDOW_MINUTES: 10, TIMER_MIGRATOR_PAGE_SIZE: 100 });
    s.index.buckets.set(T0 + 5 * 60_000, 10);
    expect(await s.service.migrateWindow({ start: T0, end: T0 + 600_000 })).toMatchObject({ status: 'completed', fires: 450 });
    expect(s.index.buckets.get(T0 + 5 * 60_000)).toBe(10);
    expect(s.index.members.size).toBe(450);
  });

  it('skips a window completed while it waited for the lock', async () => {
    const s = setup([timer('1', { cron: '* * * * *' })], T0);
    s.windows.done.set(T0, T0 + H);
    expect(await s.service.migrateWindow({ start: T0, end: T0 + H })).toMatchObject({ status: 'already-completed' });
    expect(s.tasks.calls).toBe(0);
  });
});
