import { Logger } from '@nestjs/common';
import { Clock } from '@timer/platform';
import { FireRef, SliceMessage, TaskMessage } from '@timer/contracts';
import type { SliceRange } from '@timer/dal';
import type { LockTokenExtension } from '@timer/redis';
import { Registry } from 'prom-client';
import { DueFires, PendingFires, SliceState, SliceWalker, SliceWalkerOptions, TaskPublisher } from './slice-walker';
import { TriggerMetrics } from './trigger.metrics';

const M = Date.UTC(2030, 0, 1, 12, 0); // the slice's minute
const END = M + 60_000;
const OPTIONS: SliceWalkerOptions = { stepMs: 200, leadMs: 500, reconcileMs: 10_000, leaseMs: 30_000 };
const SLICE: SliceMessage = { minute: M, bucket: 1, buckets: 4, lockToken: 'token-a' };

/** A clock that only moves when the code under test sleeps (or the test moves it). */
class FakeClock implements Clock {
  sleeps = 0;
  constructor(public current: number) {}
  now(): number {
    return this.current;
  }
  async sleep(ms: number): Promise<void> {
    this.sleeps++;
    this.current += Math.max(0, ms);
  }
}

class FakeState implements SliceState {
  token: string | null = 'token-a';
  cursor: number | null = null;
  cursorWrites: number[] = [];
  done = false;
  released = false;
  extends: number[] = [];
  failExtend = false;
  /** Called before each extend: lets a test replace the token at some time. */
  beforeExtend: (now: number) => void = () => undefined;

  constructor(private readonly clock: FakeClock) {}

  async extend(slice: SliceMessage): Promise<LockTokenExtension> {
    this.beforeExtend(this.clock.now());
    if (this.failExtend) throw new Error('redis down');
    this.extends.push(this.clock.now());
    if (this.done) return 'lost';
    if (this.token === slice.lockToken) return 'held';
    if (this.token === null) {
      this.token = slice.lockToken;
      return 'reclaimed';
    }
    return 'lost';
  }
  async readCursor(): Promise<number | null> {
    return this.cursor;
  }
  async writeCursor(_m: number, _b: number, at: number): Promise<void> {
    this.cursor = at;
    this.cursorWrites.push(at);
  }
  async markDone(): Promise<void> {
    this.done = true;
  }
  async release(slice: SliceMessage): Promise<boolean> {
    if (this.token !== slice.lockToken) return false;
    this.token = null;
    this.released = true;
    return true;
  }
}

class FakeIndex implements DueFires {
  calls: [number, number][] = [];
  fail: (from: number) => boolean = () => false;
  constructor(public fires: FireRef[] = []) {}
  async due(minute: number, bucket: number, from: number, to: number): Promise<FireRef[]> {
    this.calls.push([from, to]);
    if (this.fail(from)) throw new Error('ECONNREFUSED redis');
    return this.fires.filter((f) => f.runAt >= from && f.runAt < to).sort((a, b) => a.runAt - b.runAt);
  }
}

class FakeMysql implements PendingFires {
  calls: SliceRange[] = [];
  fail: (range: SliceRange) => boolean = () => false;
  constructor(public rows: FireRef[] = []) {}
  async pendingInSlice(range: SliceRange): Promise<FireRef[]> {
    this.calls.push(range);
    if (this.fail(range)) throw new Error('mysql gone');
    return this.rows.filter((r) => r.runAt >= range.fromMs && r.runAt < range.toMs);
  }
}

class FakePublisher implements TaskPublisher {
  sent: { task: TaskMessage; at: number }[] = [];
  /** Return an error to fail that send. */
  fail: (task: TaskMessage) => Error | undefined = () => undefined;
  constructor(private readonly clock: FakeClock) {}
  async publish(task: TaskMessage): Promise<void> {
    const err = this.fail(task);
    if (err) throw err;
    this.sent.push({ task, at: this.clock.now() });
  }
  messages: TaskMessage[][] = [];
  /** All or nothing, like one broker message. */
  async publishBatch(tasks: readonly TaskMessage[]): Promise<void> {
    if (tasks.length === 1) {
      await this.publish(tasks[0]);
      this.messages.push([...tasks]);
      return;
    }
    const err = tasks.map((t) => this.fail(t)).find((e) => e !== undefined);
    if (err) throw err;
    this.messages.push([...tasks]);
    for (const task of tasks) this.sent.push({ task, at: this.clock.now() });
  }
  ids(): string[] {
    return this.sent.map((s) => s.task.fireId).sort();
  }
}

function setup(startAt: number, fires: FireRef[] = [], rows: FireRef[] = [], options: Partial<SliceWalkerOptions> = {}) {
  const clock = new FakeClock(startAt);
  const state = new FakeState(clock);
  const index = new FakeIndex(fires);
  const mysql = new FakeMysql(rows);
  const publisher = new FakePublisher(clock);
  const registry = new Registry();
  const metrics = new TriggerMetrics(registry);
  const walker = new SliceWalker({ clock, state, index, mysql, publisher, metrics }, { ...OPTIONS, ...options });
  const metric = async (name: string, labels: Record<string, string> = {}): Promise<number> => {
    const m = (await registry.getSingleMetric(name)?.get()) as { values: { value: number; labels: Record<string, unknown> }[] };
    return m.values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((n, v) => n + v.value, 0);
  };
  return { clock, state, index, mysql, publisher, walker, metric };
}

const fire = (timerId: string, offsetMs: number): FireRef => ({ timerId, runAt: M + offsetMs });
const never = () => false;

describe('SliceWalker', () => {
  beforeAll(() => Logger.overrideLogger(['error']));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  it('walks the minute in steps, publishing each step lead ms before it starts, then marks done and releases', async () => {
    const fires = [fire('5', 0), fire('9', 199), fire('13', 200), fire('17', 30_123), fire('21', 59_999)];
    const { walker, clock, state, index, publisher, metric } = setup(M - 5_000, fires);

    expect(await walker.walk(SLICE, never)).toBe('finished');

    // 300 consecutive steps of 200 ms covering exactly [M, M + 60 s).
    expect(index.calls).toHaveLength(300);
    index.calls.forEach(([from, to], i) => expect([from, to]).toEqual([M + i * 200, M + (i + 1) * 200]));
    expect(publisher.ids()).toEqual(fires.map((f) => `${f.timerId}-${f.runAt}`).sort());
    for (const { task, at } of publisher.sent) {
      const stepStart = M + Math.floor((task.runAt - M) / 200) * 200;
      expect(at).toBe(stepStart - 500); // fixed clock: published exactly at step start - lead
      expect(task).toEqual({ timerId: task.timerId, runAt: task.runAt, fireId: `${task.timerId}-${task.runAt}`, attempt: 1 });
    }
    expect(state.cursorWrites).toHaveLength(300);
    expect(state.cursor).toBe(END);
    expect(state.done).toBe(true);
    expect(state.released).toBe(true);
    expect(clock.now()).toBe(END - 200 - 500);
    // The lease is extended at the start and at least every lease / 3 (10 s) while walking.
    const gaps = state.extends.slice(1).map((t, i) => t - state.extends[i]);
    expect(state.extends[0]).toBe(M - 5_000);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(10_000);
    expect(state.extends.length).toBeGreaterThanOrEqual(6);
    expect(await metric('timer_trigger_fires_published_total', { source: 'index' })).toBe(5);
  });

  it('walks a late slice at once, without waiting', async () => {
    const fires = [fire('1', 100), fire('2', 45_000)];
    const { walker, clock, publisher, state, mysql } = setup(END + 3_600_000, fires);
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(clock.sleeps).toBe(0);
    // One read of the whole minute (an empty one of the scheduler's lookback costs one query, not 6).
    expect(mysql.calls).toEqual([{ fromMs: M, toMs: END, bucket: 1, buckets: 4 }]);
    expect(publisher.ids()).toEqual(['1-' + (M + 100), '2-' + (M + 45_000)]);
    expect(state.done).toBe(true);
  });

  it('starting behind (a restart 30 s into the minute), publishes the steps already due at once, 10 s a read, then walks step by step', async () => {
    const fires = [fire('1', 1_000), fire('2', 25_000), fire('3', 30_300), fire('4', 45_000)];
    const { walker, index, publisher, state } = setup(M + 30_000, fires);
    expect(await walker.walk(SLICE, never)).toBe('finished');
    // Three reads of 10 s and one of the steps due within the lead, instead of 153 reads one after the other.
    expect(index.calls.slice(0, 5)).toEqual([[M, M + 10_000], [M + 10_000, M + 20_000], [M + 20_000, M + 30_000], [M + 30_000, M + 30_600], [M + 30_600, M + 30_800]]);
    const at = new Map(publisher.sent.map((p) => [p.task.timerId, p.at]));
    expect([at.get('1'), at.get('2'), at.get('3')]).toEqual([M + 30_000, M + 30_000, M + 30_000]);
    expect(at.get('4')).toBe(M + 45_000 - 500);
    expect(state.cursor).toBe(END);
  });

  it('resumes from the cursor: earlier fires are not published again', async () => {
    const fires = [fire('1', 1_000), fire('2', 29_999), fire('3', 30_000), fire('4', 59_000)];
    const rows = [{ timerId: '6', runAt: M + 10_000 }, { timerId: '7', runAt: M + 40_000 }];
    const { walker, state, index, mysql, publisher } = setup(END + 1_000, fires, rows);
    state.cursor = M + 30_000;
    expect(await walker.walk(SLICE, never)).toBe('finished');
    // Late: the due steps go out reconcileMs (10 s) at a time.
    expect(index.calls).toEqual([[M + 30_000, M + 40_000], [M + 40_000, M + 50_000], [M + 50_000, END]]);
    // The minute is over: MySQL is read from the cursor to its end in one query.
    expect(mysql.calls).toEqual([{ fromMs: M + 30_000, toMs: END, bucket: 1, buckets: 4 }]);
    expect(publisher.ids()).toEqual([`3-${M + 30_000}`, `4-${M + 59_000}`, `7-${M + 40_000}`]);
  });

  it('finishes at once when the cursor is at the minute end (the previous holder died before acking)', async () => {
    const { walker, state, index, publisher } = setup(END + 1_000, [fire('1', 5)]);
    state.cursor = END;
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(index.calls).toHaveLength(0);
    expect(publisher.sent).toHaveLength(0);
    expect(state.done).toBe(true);
  });

  it('stops without publishing or marking done when the lock carries another token', async () => {
    const { walker, state, publisher, index, metric } = setup(END + 1_000, [fire('1', 5)], [{ timerId: '2', runAt: M + 6 }]);
    state.token = 'token-b';
    expect(await walker.walk(SLICE, never)).toBe('superseded');
    expect(index.calls).toHaveLength(0);
    expect(publisher.sent).toHaveLength(0);
    expect(state.done).toBe(false);
    expect(state.token).toBe('token-b'); // not released: it is the newer offer's
    expect(await metric('timer_trigger_fires_published_total')).toBe(0);
  });

  it('stops at its next extend once a newer offer took the slice mid-walk', async () => {
    const fires = [fire('1', 5_000), fire('2', 20_000), fire('3', 40_000)];
    const { walker, state, publisher, clock } = setup(M - 1_000, fires);
    state.beforeExtend = (now) => {
      if (now >= M + 15_000) state.token = 'token-b';
    };
    expect(await walker.walk(SLICE, never)).toBe('superseded');
    expect(publisher.ids()).toEqual([`1-${M + 5_000}`]);
    expect(clock.now()).toBeLessThanOrEqual(M + 15_000 + 10_000);
    expect(state.done).toBe(false);
    expect(state.cursor).toBeLessThan(M + 20_000 - 500 + 200);
  });

  it('does not take back a free lock once the slice is done', async () => {
    const { walker, state, publisher } = setup(END + 1_000, [fire('1', 5)]);
    state.token = null;
    state.done = true;
    expect(await walker.walk(SLICE, never)).toBe('superseded');
    expect(publisher.sent).toHaveLength(0);
  });

  it('takes back an expired, free lock and walks on', async () => {
    const { walker, state, publisher } = setup(END + 1_000, [fire('1', 5)]);
    state.token = null;
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.ids()).toEqual([`1-${M + 5}`]);
  });

  it('merges the index with MySQL and publishes each fire once', async () => {
    const fires = [fire('1', 1_000), fire('2', 1_100), fire('3', 25_000)];
    // 2 and 3 are in both; 4 and 5 only in MySQL (partly filled index). Rows stay pending all along,
    // so every periodic reconcile sees them again.
    const rows = [
      { timerId: '2', runAt: M + 1_100 },
      { timerId: '3', runAt: M + 25_000 },
      { timerId: '4', runAt: M + 1_150 },
      { timerId: '5', runAt: M + 50_000 },
    ];
    const { walker, publisher, mysql, metric } = setup(M - 2_000, fires, rows);
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.ids()).toEqual(['1', '2', '3', '4', '5'].map((id) => `${id}-${[...fires, ...rows].find((f) => f.timerId === id)!.runAt}`).sort());
    expect(publisher.sent).toHaveLength(5);
    // Reconciled in ranges of at most 10 s that tile the minute, read before the walk reaches them,
    // and never the whole minute at its end.
    const reconciles = mysql.calls;
    expect(reconciles.length).toBeGreaterThanOrEqual(6);
    expect(reconciles[0].fromMs).toBe(M);
    for (const [i, c] of reconciles.entries()) {
      expect(c.toMs - c.fromMs).toBeLessThanOrEqual(10_000);
      if (i > 0) expect(c.fromMs).toBeLessThanOrEqual(reconciles[i - 1].toMs);
    }
    expect(reconciles[reconciles.length - 1].toMs).toBe(END);
    expect(mysql.calls.every((c) => c.bucket === 1 && c.buckets === 4)).toBe(true);
    expect(await metric('timer_trigger_fires_published_total', { source: 'mysql' })).toBe(2);
    expect(await metric('timer_trigger_fires_published_total', { source: 'index' })).toBe(3);
    // A MySQL-only fire goes out with its step, before its time.
    const four = publisher.sent.find((s) => s.task.timerId === '4')!;
    expect(four.at).toBe(M + 1_000 - 500);
  });

  it("sends a step's reconciled fires while its index read is in flight, then the index's others, each fire once", async () => {
    const fires = [fire('1', 1_000), fire('2', 1_050), fire('3', 1_100)];
    const rows = [
      { timerId: '2', runAt: M + 1_050 },
      { timerId: '3', runAt: M + 1_100 },
      { timerId: '4', runAt: M + 1_150 },
    ];
    const { walker, index, publisher, state, metric } = setup(M - 2_000, fires, rows, { batchMax: 2 });
    let answer!: () => void;
    const due = index.due.bind(index);
    index.due = async (minute, bucket, from, to) => {
      if (from === M + 1_000) await new Promise<void>((r) => (answer = r));
      return due(minute, bucket, from, to);
    };
    const walking = walker.walk(SLICE, never);
    while (answer === undefined) await new Promise((r) => setImmediate(r));
    // The index has not answered: the plan's three went out, in messages of two, and the cursor waits for the step.
    expect(publisher.messages.map((m) => m.map((t) => t.timerId))).toEqual([['2', '3'], ['4']]);
    expect(state.cursor).toBe(M + 1_000);
    answer();
    expect(await walking).toBe('finished');
    expect(publisher.messages.map((m) => m.map((t) => t.timerId))).toEqual([['2', '3'], ['4'], ['1']]);
    expect(await metric('timer_trigger_fires_published_total', { source: 'index' })).toBe(3);
    expect(await metric('timer_trigger_fires_published_total', { source: 'mysql' })).toBe(1);
  });

  it('lets the event loop turn every few messages of a large step, so its first messages leave before the last is made', async () => {
    const fires = Array.from({ length: 5_000 }, (_, i) => fire(String(i * 4 + 1), 1_000));
    const { walker, publisher } = setup(M - 1_000, fires, [], { batchMax: 100 });
    const sentAtTurn: number[] = [];
    const publishBatch = publisher.publishBatch.bind(publisher);
    publisher.publishBatch = async (tasks) => {
      if (sentAtTurn.length === 0 && publisher.messages.length === 0) setImmediate(() => sentAtTurn.push(publisher.messages.length));
      return publishBatch(tasks);
    };
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.messages).toHaveLength(50);
    expect(sentAtTurn).toEqual([10]);
  });

  it("reconciles right after the messages of a step starting on a whole second, not before a step's messages", async () => {
    const fires = Array.from({ length: 60 }, (_, s) => fire(String(s * 4 + 1), s * 1_000));
    const { walker, mysql, publisher, clock } = setup(M - 2_000, fires);
    const at: number[] = [];
    const read = mysql.pendingInSlice.bind(mysql);
    mysql.pendingInSlice = (range) => {
      at.push(clock.now());
      return read(range);
    };
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.sent).toHaveLength(60);
    expect(at.length).toBeGreaterThanOrEqual(6);
    // After the walk's first, each read starts 500 ms (the lead) before a whole second, once that second's step went out.
    for (const a of at.slice(1)) {
      expect((a + 500) % 1_000).toBe(0);
      expect(publisher.sent.some((s) => s.at === a && s.task.runAt === a + 500)).toBe(true);
    }
  });

  it('publishes everything from MySQL when the index is empty (flushed)', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ timerId: String(100 + i * 4 + 1), runAt: M + i * 1_000 + 7 }));
    const { walker, publisher, state } = setup(END + 10_000, [], rows);
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.sent).toHaveLength(50);
    expect(new Set(publisher.ids()).size).toBe(50);
    expect(state.done).toBe(true);
  });

  it('reads MySQL per step while Redis fails, and goes back to the index when it recovers', async () => {
    const fires = [fire('1', 2_000), fire('9', 40_000)];
    const rows = [{ timerId: '1', runAt: M + 2_000 }, { timerId: '5', runAt: M + 3_000 }];
    const { walker, index, mysql, publisher, state, metric } = setup(M - 1_000, fires, rows, { reconcileMs: 600_000 });
    index.fail = (from) => from < M + 30_000; // Redis down for the first half
    state.failExtend = false;
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.ids()).toEqual([`1-${M + 2_000}`, `5-${M + 3_000}`, `9-${M + 40_000}`]);
    // 150 failed index reads, each replaced by a MySQL read of just that step.
    expect(await metric('timer_trigger_mysql_fallbacks_total')).toBe(150);
    const stepReads = mysql.calls.filter((c) => c.toMs - c.fromMs === 200);
    expect(stepReads).toHaveLength(150);
    expect(stepReads[0]).toEqual({ fromMs: M, toMs: M + 200, bucket: 1, buckets: 4 });
    expect(state.done).toBe(true);
  });

  it('keeps walking when the lock cannot be extended because Redis fails', async () => {
    const { walker, state, publisher } = setup(M - 1_000, [fire('1', 30_000)]);
    state.failExtend = true;
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.sent).toHaveLength(1);
  });

  it('gives up (throws, for a nack) when both Redis and MySQL keep failing, with the cursor before the step', async () => {
    const { walker, index, mysql, state, publisher } = setup(END + 1_000, [fire('1', 100), fire('2', 20_000)], [], { failureBudgetMs: 5_000 });
    index.fail = (from) => from >= M + 10_000;
    mysql.fail = (r) => r.fromMs >= M + 10_000;
    await expect(walker.walk(SLICE, never)).rejects.toThrow(/kept failing/);
    expect(publisher.ids()).toEqual([`1-${M + 100}`]);
    expect(state.cursor).toBe(M + 10_000);
    expect(state.done).toBe(false);
  });

  it('retries failed sends and moves the cursor only once every message of the step was acked', async () => {
    const { walker, publisher, state } = setup(M - 1_000, [fire('1', 100), fire('2', 150), fire('3', 300)]);
    let failures = 2;
    publisher.fail = (task) => (task.timerId === '2' && failures-- > 0 ? new Error('send timeout') : undefined);
    const cursorAtFirstSend: (number | null)[] = [];
    const publish = publisher.publish.bind(publisher);
    publisher.publish = async (task) => {
      cursorAtFirstSend.push(state.cursor);
      return publish(task);
    };
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.ids()).toEqual([`1-${M + 100}`, `2-${M + 150}`, `3-${M + 300}`]);
    expect(publisher.sent).toHaveLength(3); // 1 was not sent again with the retries of 2
    expect(cursorAtFirstSend.slice(0, 4)).toEqual([null, null, null, null]); // step [0, 200): 2 sends, then 2 retries
    expect(cursorAtFirstSend[4]).toBe(M + 200);
  });

  it('sends a step in messages of up to batchMax fires and sends a failed message again whole', async () => {
    const fires = [fire('1', 100), fire('2', 110), fire('3', 120), fire('4', 130), fire('5', 140), fire('6', 900)];
    const { walker, publisher, metric } = setup(M - 1_000, fires, [], { batchMax: 2 });
    let failures = 1;
    publisher.fail = (task) => (task.timerId === '3' && failures-- > 0 ? new Error('send timeout') : undefined);
    expect(await walker.walk(SLICE, never)).toBe('finished');
    // Step [0, 200): [1,2] [3,4] [5]; [3,4] failed once and went again whole; step [800, 1000): [6].
    expect(publisher.messages.map((m) => m.map((t) => t.timerId))).toEqual([['1', '2'], ['5'], ['3', '4'], ['6']]);
    expect(publisher.ids()).toEqual(fires.map((f) => `${f.timerId}-${f.runAt}`).sort());
    expect(await metric('timer_trigger_fires_published_total')).toBe(6);
  });

  it('refuses a batchMax the executor would reject', () => {
    expect(() => setup(M, [], [], { batchMax: 1_001 })).toThrow(/batchMax/);
    expect(() => setup(M, [], [], { batchMax: 0 })).toThrow(/batchMax/);
  });

  it('stops at a step boundary on request, with the cursor at the last published step', async () => {
    const fires = [fire('1', 1_000), fire('2', 2_000), fire('3', 3_000)];
    const { walker, publisher, state, clock } = setup(M - 1_000, fires);
    const stop = () => clock.now() >= M + 2_000 - 500 + 50;
    expect(await walker.walk(SLICE, stop)).toBe('stopped');
    expect(publisher.ids()).toEqual([`1-${M + 1_000}`, `2-${M + 2_000}`]);
    expect(state.cursor).toBe(M + 2_200);
    expect(state.done).toBe(false);
    expect(state.released).toBe(false); // kept: the redelivered message carries the same token
  });

  it('leaves rows created behind the walk to the role that created them: no end-of-minute sweep', async () => {
    // FireWriter publishes a fire created within NEAR_NOW_MS of its time itself, and the reconciler
    // covers a failed publish. A sweep here re-sent fires that were only waiting in the executor's
    // queue (25,403 duplicate messages at 5,000 fires/s, exactly when the pipeline was behind).
    const { walker, publisher, mysql, clock } = setup(M - 1_000, [], [], { reconcileMs: 600_000 });
    const late = { timerId: '3', runAt: M + 10_000 };
    const pendingInSlice = mysql.pendingInSlice.bind(mysql);
    mysql.pendingInSlice = async (range) => {
      if (clock.now() > M + 20_000 && !mysql.rows.includes(late)) mysql.rows.push(late);
      return pendingInSlice(range);
    };
    expect(await walker.walk(SLICE, never)).toBe('finished');
    expect(publisher.ids()).toEqual([]);
    expect(mysql.calls).toEqual([{ fromMs: M, toMs: END, bucket: 1, buckets: 4 }]);
  });

  it('refuses options that cannot walk', () => {
    const { clock, state } = setup(M);
    const deps = { clock, state, index: new FakeIndex(), mysql: new FakeMysql(), publisher: new FakePublisher(clock), metrics: new TriggerMetrics(new Registry()) };
    expect(() => new SliceWalker(deps, { ...OPTIONS, stepMs: 0 })).toThrow(/stepMs/);
    expect(() => new SliceWalker(deps, { ...OPTIONS, leadMs: -1 })).toThrow(/leadMs/);
  });
});
