import { FireRef, TaskMessage } from '@timer/contracts';
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
  return { publisher, indexed, writer: new FireWriter(rows, index, publisher, { now: () => NOW }) };
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
