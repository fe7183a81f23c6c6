import { spawnSync } from 'child_process';
import { existsSync } from 'fs';
import { join } from 'path';
import { TOPICS } from '@timer/contracts';
import { PulsarAdmin, topicName, WsPulsarClient } from '@timer/pulsar';
import { testEnv, uniqueId } from '@timer/testing';
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
    expect(result).toEqual({ replayed: 3, from: dlq, to: tasks });

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
