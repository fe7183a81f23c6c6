import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { brokerScriptEnv } from '@timer/testing';
import type { WsPulsarClient } from '../src/index';
import { collect, eventually, newAdmin, newClient, PULSAR_URL, uniqueTopic } from './pulsar-it';

/**
 * Restarts the real broker with the repository's script (stop, start on the same data dir, return
 * once it answers), so it is the one test here that disturbs other tests using the broker.
 */
const REPO_ROOT = resolve(__dirname, '../../..');
const RESTART_SCRIPT = join(REPO_ROOT, 'deploy/local/pulsar.sh');

function restartBroker(): Promise<string> {
  return new Promise((ok, fail) => {
    execFile('bash', [RESTART_SCRIPT, 'restart'], { cwd: REPO_ROOT, env: brokerScriptEnv(PULSAR_URL), timeout: 240_000 }, (error, stdout, stderr) =>
      error ? fail(new Error(`${RESTART_SCRIPT} restart failed: ${error.message}\n${stdout}${stderr}`)) : ok(stdout + stderr),
    );
  });
}

describe('broker restart (real broker)', () => {
  let client: WsPulsarClient;
  const warnings: string[] = [];

  beforeEach(() => {
    const logger = { log: () => undefined, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
    client = newClient({ reconnectMaxDelayMs: 2000, sendTimeoutMs: 180_000, operationTimeoutMs: 120_000, logger });
  });

  afterEach(() => client.close());

  it('producer and consumer ride out a broker restart: sends issued meanwhile are delivered, consumption resumes', async () => {
    if (!existsSync(RESTART_SCRIPT)) {
      throw new Error(`this test needs ${RESTART_SCRIPT} (restart the local broker); it does not exist yet`);
    }
    const topic = uniqueTopic('restart');
    const collector = await collect(client, { topic, subscription: 'sub', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic });

    await Promise.all(Array.from({ length: 20 }, (_, i) => producer.send({ payload: `before-${i}` })));
    await collector.until((c) => c.messages.length >= 20, 15_000);

    const restart = restartBroker();
    // Sent while the broker goes down and comes back: queued or re-sent, never lost.
    const during: Array<Promise<string>> = [];
    const ticker = setInterval(() => during.push(producer.send({ payload: `during-${during.length}` })), 100);
    await restart;
    clearInterval(ticker);
    // The restart really cut both sessions (so the reconnect paths ran).
    expect(warnings.some((w) => w.startsWith(`producer ${topic}: session lost`))).toBe(true);
    expect(warnings.some((w) => w.startsWith(`consumer ${topic} [sub]: session lost`))).toBe(true);
    const after = Array.from({ length: 20 }, (_, i) => producer.send({ payload: `after-${i}` }));
    await Promise.all([...during, ...after]);

    const expected = [
      ...Array.from({ length: during.length }, (_, i) => `during-${i}`),
      ...Array.from({ length: 20 }, (_, i) => `after-${i}`),
    ];
    expect(during.length).toBeGreaterThan(10);
    await collector.until((c) => {
      const got = new Set(c.payloads());
      return expected.every((p) => got.has(p));
    }, 120_000);
    // At-least-once: duplicates are allowed, losses are not; every payload is one we sent.
    const sent = new Set([...expected, ...Array.from({ length: 20 }, (_, i) => `before-${i}`)]);
    expect(collector.payloads().filter((p) => !sent.has(p))).toEqual([]);
    // Acks work on the new sessions: the subscription drains.
    const stats = await eventually(() => newAdmin().topicStats(topic), (s) => s.subscriptions.sub?.msgBacklog === 0, 30_000);
    expect(stats.subscriptions.sub.msgBacklog).toBe(0);
  }, 300_000);
});
