import { randomBytes } from 'node:crypto';
import { PulsarAdminError, topicName } from '../src/index';
import { newAdmin, newClient, PULSAR_URL } from './pulsar-it';

describe('PulsarAdmin (real broker)', () => {
  const admin = newAdmin();
  const tenant = `it-tenant-${randomBytes(3).toString('hex')}`;
  const namespace = `${tenant}/jobs`;
  const topic = topicName(tenant, 'jobs', 'due');

  afterAll(async () => {
    // Leave the shared broker as it was: topic, namespace, tenant.
    await admin.deleteTopic(topic, true).catch(() => undefined);
    // Not ?force=true: the broker refuses forced namespace deletion unless configured to allow it.
    await fetch(`${PULSAR_URL}/admin/v2/namespaces/${namespace}`, { method: 'DELETE' }).catch(() => undefined);
    await fetch(`${PULSAR_URL}/admin/v2/tenants/${tenant}`, { method: 'DELETE' }).catch(() => undefined);
  });

  it('reports the broker healthy and knows its cluster', async () => {
    const health = await admin.health();
    expect(health).toMatchObject({ healthy: true, detail: 'ok' });
    expect(await admin.clusters()).toContain('standalone');
  });

  it('creates tenant, namespace, topic and subscription idempotently, then inspects them', async () => {
    for (let round = 0; round < 2; round++) {
      await admin.ensureTenant(tenant);
      await admin.ensureNamespace(namespace);
      await admin.ensureTopic(topic);
      await admin.ensureSubscription(topic, 'audit', 'Earliest');
    }
    const client = newClient();
    try {
      const producer = await client.createProducer({ topic });
      await producer.send({ payload: 'first', key: 'job-1', properties: { jobId: 'J-1' } });
      await producer.send({ payload: 'second' });
    } finally {
      await client.close();
    }
    const stats = await admin.topicStats(topic);
    expect(stats.msgInCounter).toBe(2);
    expect(stats.subscriptions.audit.msgBacklog).toBe(2);

    const peeked = await admin.peekMessages(topic, 'audit', 5);
    expect(peeked).toHaveLength(2);
    expect(peeked[0].payload.toString()).toBe('first');
    expect(peeked[0].key).toBe('job-1');
    expect(peeked[0].properties).toEqual({ jobId: 'J-1' });
    expect(peeked[0].entryId).toMatch(/^\d+:\d+$/);
    expect(peeked[0].publishTime).toBeGreaterThan(Date.now() - 60_000);
    expect(peeked[1].payload.toString()).toBe('second');
    // Peeking does not consume.
    expect((await admin.topicStats(topic)).subscriptions.audit.msgBacklog).toBe(2);
    // Asked for, the publish time of the oldest unacknowledged message (how far behind a consumer is).
    const withAge = await admin.topicStats(topic, { earliestTimeInBacklog: true });
    expect(withAge.subscriptions.audit.earliestMsgPublishTimeInBacklog).toBe(peeked[0].publishTime);
  }, 30_000);

  it('lets several processes create the same subscriptions at the same time (roles at start-up)', async () => {
    await admin.ensureTenant(tenant);
    await admin.ensureNamespace(namespace);
    await admin.ensureTopic(topic);
    for (let round = 0; round < 3; round++) {
      const sub = `race-${round}`;
      await expect(Promise.all(Array.from({ length: 8 }, () => newAdmin().ensureSubscription(topic, sub, 'Earliest')))).resolves.toHaveLength(8);
      const res = await fetch(`${PULSAR_URL}/admin/v2/persistent/${namespace}/due/subscriptions`);
      expect((await res.json()) as string[]).toContain(sub);
    }
  });

  it('fails with status and reason for what does not exist', async () => {
    const error = await admin.topicStats(topicName(tenant, 'nope', 'x')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PulsarAdminError);
    expect((error as PulsarAdminError).status).toBe(404);
    expect((error as PulsarAdminError).message).toMatch(/HTTP 404 .*not (found|exist)/i);
  });
});
