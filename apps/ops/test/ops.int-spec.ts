import { spawnSync } from 'child_process';
import { existsSync } from 'fs';
import { join } from 'path';
import { MESSAGE_PROPERTIES, TOPICS } from '@timer/contracts';
import { PulsarAdmin, topicName, WsPulsarClient } from '@timer/pulsar';
import type { OutgoingMessage, PulsarClient } from '@timer/pulsar';
import { deletePulsarNamespace, eventually, testEnv, uniqueId } from '@timer/testing';
import { OPS_SUBSCRIPTION, OpsService } from '../src/ops.service';

jest.setTimeout(60_000);

describe('ops command against the real broker', () => {
  const env = testEnv();
  const namespace = uniqueId('ops');
  const admin = new PulsarAdmin({ serviceUrl: env.pulsarUrl });
  const client = new WsPulsarClient({ serviceUrl: env.pulsarUrl });
  const ops = new OpsService(admin, client, env.pulsarTenant, namespace);
  const dlq = topicName(env.pulsarTenant, namespace, TOPICS.deadLetter);
  const tasks = topicName(env.pulsarTenant, namespace, TOPICS.tasks);

  beforeAll(async () => {
    await admin.ensureTenant(env.pulsarTenant);
    await admin.ensureNamespace(`${env.pulsarTenant}/${namespace}`);
    await admin.ensureTopic(tasks);
    await admin.ensureSubscription(tasks, 'executor', 'Earliest');
    const producer = await client.createProducer({ topic: dlq });
    for (let i = 1; i <= 3; i++) {
      await producer.send({ payload: JSON.stringify({ timerId: '7', runAt: 1000 * i, fireId: `7-${1000 * i}`, attempt: 3 }), key: '7', properties: { 'fire-id': `7-${1000 * i}` } });
    }
    await producer.close();
  });

  afterAll(async () => {
    await client.close();
    await deletePulsarNamespace(env.pulsarUrl, `${env.pulsarTenant}/${namespace}`);
  });

  it('reports each service topic, with subscriptions, and the ones not created yet', async () => {
    await ops.peek(TOPICS.deadLetter, 1); // creates the ops subscription at the earliest position
    const rows = await ops.topics();
    expect(rows.map((r) => r.local)).toEqual(Object.values(TOPICS));
    const dead = rows.find((r) => r.local === TOPICS.deadLetter)!;
    expect(dead.exists).toBe(true);
    expect(dead.msgIn).toBe(3);
    expect(dead.subscriptions).toEqual([expect.objectContaining({ name: OPS_SUBSCRIPTION, backlog: 3, consumers: 0 })]);
    expect(rows.find((r) => r.local === TOPICS.tasks)!.subscriptions.map((s) => s.name)).toEqual(['executor']);
    expect(rows.find((r) => r.local === TOPICS.migrateRanges)!.exists).toBe(false);
  });

  it('peeks dead letters without consuming them', async () => {
    const first = await ops.peek(TOPICS.deadLetter, 10);
    expect(first.map((m) => JSON.parse(m.payload.toString('utf8')).fireId)).toEqual(['7-1000', '7-2000', '7-3000']);
    expect(first[0].key).toBe('7');
    expect(first[0].properties['fire-id']).toBe('7-1000');
    expect((await ops.peek(TOPICS.deadLetter, 10)).length).toBe(3);
  });

  it('replays dead letters to the tasks topic, keeping key and properties, and empties the backlog', async () => {
    const result = await ops.replay(TOPICS.deadLetter, TOPICS.tasks, 100, 1_000);
    expect(result).toEqual({ replayed: 3, duplicates: 0, from: dlq, to: tasks });

    const executor = await client.subscribe({ topic: tasks, subscription: 'executor', subscriptionType: 'Shared' });
    const got = [];
    for (let i = 0; i < 3; i++) got.push(await executor.receive(10_000));
    for (const m of got) await executor.acknowledge(m);
    await executor.close();
    expect(got.map((m) => JSON.parse(m.payload.toString('utf8')).fireId).sort()).toEqual(['7-1000', '7-2000', '7-3000']);
    expect(got.every((m) => m.key === '7' && m.properties['replayed-from'] === dlq && m.properties['fire-id'].startsWith('7-'))).toBe(true);

    const after = (await ops.topics([TOPICS.deadLetter]))[0];
    expect(after.subscriptions.find((s) => s.name === OPS_SUBSCRIPTION)?.backlog).toBe(0);
  });

  it('replays only the dead letters present at its start, each fire once: a fire dead-lettered again meanwhile stays for the next run', async () => {
    const fireOf = (m: { properties: Record<string, string> }) => m.properties[MESSAGE_PROPERTIES.fireId];
    const deadLetter = (fire: string, note: string): OutgoingMessage => {
      const [timerId, runAt] = fire.split('-');
      return {
        payload: JSON.stringify({ timerId, runAt: Number(runAt), fireId: fire, attempt: 3 }),
        key: timerId,
        properties: { [MESSAGE_PROPERTIES.fireId]: fire, [MESSAGE_PROPERTIES.reason]: note },
      };
    };
    const dlqProducer = await client.createProducer({ topic: dlq });
    // 8-5000 twice (a crash between dead letter and record dead-letters a fire twice), 9-5000 once.
    for (const fire of ['8-5000', '9-5000', '8-5000']) await dlqProducer.send(deadLetter(fire, 'attempts exhausted'));

    // A stand-in executor: every replayed fire is "called" and fails again, so it is dead-lettered again.
    const calls: string[] = [];
    const executor = await client.subscribe({ topic: tasks, subscription: 'executor', subscriptionType: 'Shared' });
    let stopped = false;
    const executing = (async () => {
      while (!stopped) {
        const m = await executor.receive(200).catch(() => undefined);
        if (!m) continue;
        await dlqProducer.send(deadLetter(fireOf(m), 'failed again after a replay'));
        calls.push(fireOf(m));
        await executor.acknowledge(m);
      }
    })();
    // The replay goes on to its next message only once the executor dead-lettered the last one again,
    // so the new dead letters are in the topic while the run still reads it.
    const waitingClient: PulsarClient = {
      subscribe: (o) => client.subscribe(o),
      close: async () => undefined,
      createProducer: async (o) => {
        const producer = await client.createProducer(o);
        return {
          topic: producer.topic,
          flush: () => producer.flush(),
          close: () => producer.close(),
          send: async (m: OutgoingMessage) => {
            const id = await producer.send(m);
            const before = calls.length;
            await eventually('the executor to dead-letter the replayed fire again', async () => calls.length > before);
            return id;
          },
        };
      },
    };
    try {
      const first = await new OpsService(admin, waitingClient, env.pulsarTenant, namespace).replay(TOPICS.deadLetter, TOPICS.tasks, 100, 3_000);
      expect(first).toEqual({ replayed: 2, duplicates: 1, from: dlq, to: tasks });
      expect(calls.sort()).toEqual(['8-5000', '9-5000']);
      const left = await ops.peek(TOPICS.deadLetter, 10);
      expect(left.map((m) => `${fireOf(m)} ${m.properties[MESSAGE_PROPERTIES.reason]}`).sort()).toEqual([
        '8-5000 failed again after a replay',
        '9-5000 failed again after a replay',
      ]);

      // The next run takes them (and again leaves what its own replays dead-letter).
      calls.length = 0;
      const second = await new OpsService(admin, waitingClient, env.pulsarTenant, namespace).replay(TOPICS.deadLetter, TOPICS.tasks, 100, 3_000);
      expect(second).toEqual({ replayed: 2, duplicates: 0, from: dlq, to: tasks });
      expect(calls.sort()).toEqual(['8-5000', '9-5000']);
      expect((await ops.peek(TOPICS.deadLetter, 10)).length).toBe(2);
    } finally {
      stopped = true;
      await executing;
      await executor.close();
      await dlqProducer.close();
    }
  });

  it('runs as a command: `topics --json`, and refuses an unknown command', () => {
    const root = join(__dirname, '..', '..', '..');
    const main = 'dist/apps/ops/src/main.js';
    if (!existsSync(join(root, main))) throw new Error('dist/ is missing: run `npm run build` (npm test does)');
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['-r', './scripts/register-paths.js', main, ...args], {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, TIMER_PULSAR_URL: env.pulsarUrl, TIMER_PULSAR_TENANT: env.pulsarTenant, TIMER_PULSAR_NAMESPACE: namespace },
      });
    const topics = run('topics', '--json');
    expect(topics.stderr).toBe('');
    expect(topics.status).toBe(0);
    const rows = JSON.parse(topics.stdout) as { local: string; exists: boolean }[];
    expect(rows.find((r) => r.local === TOPICS.deadLetter)?.exists).toBe(true);

    const bad = run('frobnicate');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/unknown command "frobnicate"/);
  });
});
