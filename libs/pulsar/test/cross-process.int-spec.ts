import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { WsPulsarClient } from '../src/index';
import { collect, newAdmin, newClient, PULSAR_URL, uniqueTopic, eventually } from './pulsar-it';

const FIXTURES = join(__dirname, 'fixtures');

/** Runs a fixture in its own Node process; resolves with its stdout lines once it exits 0. */
function runChild(script: string, args: string[], onLine: (line: string) => void = () => undefined): {
  child: ChildProcess;
  done: Promise<string[]>;
} {
  const child = spawn(process.execPath, [join(FIXTURES, script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    onLine(line);
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<string[]>((resolve, reject) => {
    child.on('exit', (code) => (code === 0 ? resolve(lines) : reject(new Error(`${script} exited ${code}: ${stderr}`))));
  });
  return { child, done };
}

describe('publish in one process, consume in another (real broker)', () => {
  let client: WsPulsarClient;

  beforeEach(() => {
    client = newClient();
  });

  afterEach(() => client.close());

  it('consumes here what a separate process published (ids, payloads, keys, properties match)', async () => {
    const topic = uniqueTopic('xproc-in');
    const collector = await collect(client, { topic, subscription: 'here', subscriptionType: 'Shared' });
    const { child, done } = runChild('raw-ws-producer.js', [PULSAR_URL, topic, '50']);
    expect(child.pid).not.toBe(process.pid);
    const published = (await done).map((l) => JSON.parse(l) as { seq: number; messageId: string });
    expect(published).toHaveLength(50);

    await collector.until((c) => c.messages.length >= 50, 20_000);
    const bySeq = new Map(collector.messages.map(({ message }) => [Number(message.properties.seq), message]));
    expect(bySeq.size).toBe(50);
    for (const { seq, messageId } of published) {
      const m = bySeq.get(seq)!;
      expect(m.messageId).toBe(messageId);
      expect(m.payload.toString()).toBe(`cross-process-${seq}`);
      expect(m.key).toBe(`key-${seq % 3}`);
      expect(m.properties).toEqual({ seq: String(seq), origin: 'child' });
      expect(m.publishTime).toBeGreaterThan(Date.now() - 60_000);
    }
  }, 60_000);

  it('a separate process consumes and acks what this one published', async () => {
    const topic = uniqueTopic('xproc-out');
    let ready!: () => void;
    const subscribed = new Promise<void>((resolve) => (ready = resolve));
    const { done } = runChild('raw-ws-consumer.js', [PULSAR_URL, topic, 'there', '40'], (line) => {
      if (line === 'ready') ready();
    });
    await subscribed;
    const producer = await client.createProducer({ topic });
    const ids = await Promise.all(
      Array.from({ length: 40 }, (_, i) => producer.send({ payload: `to-child-${i}`, key: `k${i}`, properties: { i: String(i) } })),
    );
    const lines = (await done).filter((l) => l !== 'ready');
    const got = lines.map((l) => JSON.parse(l) as { messageId: string; payload: string; key: string; properties: Record<string, string>; redeliveryCount: number });
    expect(got.map((g) => g.messageId).sort()).toEqual([...ids].sort());
    for (const g of got) {
      const i = Number(g.properties.i);
      expect(g.messageId).toBe(ids[i]);
      expect(g.payload).toBe(`to-child-${i}`);
      expect(g.key).toBe(`k${i}`);
      expect(g.redeliveryCount).toBe(0);
    }
    // The child's acks reached the subscription: nothing left in its backlog.
    const stats = await eventually(() => newAdmin().topicStats(topic), (s) => s.subscriptions.there?.msgBacklog === 0, 10_000);
    expect(stats.subscriptions.there.msgBacklog).toBe(0);
    expect(stats.msgInCounter).toBe(40);
  }, 60_000);
});
