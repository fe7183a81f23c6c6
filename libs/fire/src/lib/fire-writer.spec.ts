import { FireRef, TaskMessage } from '@timer/contracts';
import type { EntityManager } from 'typeorm';
import { DueFirePublisher, FireIndexer, FireRows, FireWriter } from './fire-writer';

const NOW = 1_800_000_000_000;

class Publisher implements DueFirePublisher {
  single: { task: TaskMessage; properties?: Record<string, string> }[] = [];
  batches: TaskMessage[][] = [];
  failBatchWith: string | null = null;
  async publish(task: TaskMessage, properties?: Record<string, string>) {
    this.single.push({ task, properties });
  }
  async publishBatch(tasks: readonly TaskMessage[]) {
    if (this.failBatchWith !== null && tasks.some((t) => t.timerId === this.failBatchWith)) throw new Error('broker said no');
    this.batches.push([...tasks]);
  }
}

function setup() {
  const publisher = new Publisher();
  const indexed: FireRef[] = [];
  const index: FireIndexer = { add: async (f) => void indexed.push(...f) };
  const rows: FireRows = { insertIgnore: async (f) => f.length };
  const clock = { at: NOW, now: () => clock.at };
  return { publisher, indexed, clock, writer: new FireWriter(rows, index, publisher, clock) };
}

const fires = (n: number, timer = (i: number) => `t${i}`): FireRef[] => Array.from({ length: n }, (_, i) => ({ timerId: timer(i), runAt: NOW - 60_000 + i }));

describe('FireWriter.publishDue', () => {
  it('sends many past-due fires (a migrator catching up) in messages of up to 100 fires', async () => {
    const { publisher, writer } = setup();
    expect(await writer.publishDue(fires(250))).toBe(250);
    expect(publisher.batches.map((b) => b.length)).toEqual([100, 100, 50]);
    expect(publisher.batches.flat().map((t) => t.fireId)).toEqual(fires(250).map((f) => `${f.timerId}-${f.runAt}`));
    expect(publisher.single).toHaveLength(0);
  });

  it('sends a fire with properties (run now) in its own message, carrying them', async () => {
    const { publisher, writer } = setup();
    await writer.publishDue(fires(2), { 'x-timer-run-now': '1' });
    expect(publisher.batches).toHaveLength(0);
    expect(publisher.single.map((s) => s.properties)).toEqual([{ 'x-timer-run-now': '1' }, { 'x-timer-run-now': '1' }]);
  });

  it('indexes the fires of a message the broker refused, for the walk and the reconciler', async () => {
    const { publisher, indexed, writer } = setup();
    publisher.failBatchWith = 't150';
    expect(await writer.publishDue(fires(250))).toBe(150);
    expect(indexed.map((f) => f.timerId)).toEqual(fires(250).slice(100, 200).map((f) => f.timerId));
  });
});

describe('FireWriter.write in a transaction', () => {
  const M = {} as EntityManager;
  const task = (runAt: number) => ({ app: 'a', timerId: '7', runAt });

  it('indexes nothing before the commit: an entry the walk could publish must name a committed row', async () => {
    const { indexed, writer } = setup();
    const w = await writer.write([task(NOW + 1_000), task(NOW + 30_000), task(NOW + 60_000)], M);
    expect(indexed).toEqual([]);
    expect(w.due.map((f) => f.runAt - NOW)).toEqual([1_000]);
    expect(w.unindexed.map((f) => f.runAt - NOW)).toEqual([30_000, 60_000]);
  });

  it('after the commit indexes the later fires and publishes those that came due while it committed', async () => {
    const { indexed, publisher, clock, writer } = setup();
    const w = await writer.write([task(NOW + 1_000), task(NOW + 3_000), task(NOW + 60_000)], M);
    clock.at = NOW + 1_500; // the commit took 1.5 s: the 3-s fire is now within NEAR_NOW_MS
    await writer.afterCommit(w);
    expect(indexed.map((f) => f.runAt - NOW)).toEqual([60_000]);
    expect([...publisher.single.map((s) => s.task), ...publisher.batches.flat()].map((t) => t.runAt - NOW).sort((a, b) => a - b)).toEqual([1_000, 3_000]);
  });

  it('answers without waiting for the broker, and holds the shutdown until the publish is done', async () => {
    const { indexed, publisher, writer } = setup();
    let ack!: () => void;
    publisher.publish = (task) => new Promise<void>((resolve) => (ack = () => resolve(void publisher.single.push({ task }))));
    const w = await writer.write([task(NOW + 1_000), task(NOW + 60_000)], M);
    await writer.afterCommit(w);
    expect(indexed.map((f) => f.runAt - NOW)).toEqual([60_000]);
    expect(publisher.single).toHaveLength(0);
    let shutDown = false;
    const shutdown = writer.beforeApplicationShutdown().then(() => (shutDown = true));
    await new Promise((r) => setImmediate(r));
    expect(shutDown).toBe(false);
    ack();
    await shutdown;
    expect(publisher.single.map((s) => s.task.runAt - NOW)).toEqual([1_000]);
  });

  it('without a transaction indexes at once', async () => {
    const { indexed, writer } = setup();
    const w = await writer.write([task(NOW + 60_000)]);
    expect(indexed.map((f) => f.runAt - NOW)).toEqual([60_000]);
    expect(w.unindexed).toEqual([]);
  });
});

describe('FireWriter with calendars', () => {
  const at = (iso: string) => Date.parse(iso);
  const timer = {
    id: '7',
    app: 'a',
    cron: '0 9 * * *',
    runAt: null,
    timeZone: 'UTC',
    calendarRules: [{ name: 'weekend', timeZone: null, exclude: { weekdays: [6, 7] } }],
  };

  it('gives the fires a calendar excludes with `calendar <name>`, and moves them with nextBusinessDay (next_fire_at too)', () => {
    // Friday 5 June 2026 to Tuesday 9 June.
    const [from, to] = [at('2026-06-05T00:00:00Z'), at('2026-06-09T00:00:00Z')];
    expect(FireWriter.firesOf({ ...timer, onExcluded: 'skip' }, from, to)).toEqual([
      { app: 'a', timerId: '7', runAt: at('2026-06-05T09:00:00Z') },
      { app: 'a', timerId: '7', runAt: at('2026-06-06T09:00:00Z'), excluded: 'calendar weekend' },
      { app: 'a', timerId: '7', runAt: at('2026-06-07T09:00:00Z'), excluded: 'calendar weekend' },
      { app: 'a', timerId: '7', runAt: at('2026-06-08T09:00:00Z') },
    ]);
    expect(FireWriter.firesOf({ ...timer, onExcluded: 'nextBusinessDay' }, from, to).map((f) => f.runAt)).toEqual([at('2026-06-05T09:00:00Z'), at('2026-06-08T09:00:00Z')]);
    expect(FireWriter.nextFireAt({ ...timer, onExcluded: 'nextBusinessDay' }, at('2026-06-05T10:00:00Z'))).toBe(at('2026-06-08T09:00:00Z'));
    expect(FireWriter.nextFireAt({ ...timer, onExcluded: 'skip' }, at('2026-06-05T10:00:00Z'))).toBe(at('2026-06-06T09:00:00Z'));
  });

  it('writes an excluded fire as a row and neither indexes nor publishes it', async () => {
    const { publisher, indexed, clock } = setup();
    const rows: unknown[] = [];
    const w = new FireWriter({ insertIgnore: async (f) => (rows.push(...f), f.length) }, { add: async (f) => void indexed.push(...f) }, publisher, clock);
    const written = await w.write([
      { app: 'a', timerId: '7', runAt: NOW + 60_000, excluded: 'calendar weekend' },
      { app: 'a', timerId: '7', runAt: NOW + 120_000 },
      { app: 'a', timerId: '7', runAt: NOW, excluded: 'calendar weekend' },
    ]);
    expect(rows).toHaveLength(3);
    expect(written.due).toEqual([]);
    expect(indexed).toEqual([{ timerId: '7', runAt: NOW + 120_000 }]);
  });
});
