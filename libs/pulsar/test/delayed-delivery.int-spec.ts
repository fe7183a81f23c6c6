import type { WsPulsarClient } from '../src/index';
import { collect, newClient, PULSAR_URL, sleep, uniqueTopic } from './pulsar-it';

/**
 * The broker may deliver a delayed message up to one tick early unless
 * isDelayedDeliveryDeliverAtTimeStrict=true (Pulsar's default is false). The test reads the
 * broker's runtime settings and holds it to what they promise: never early when strict, never more
 * than a tick early otherwise.
 */
async function delaySettings(): Promise<{ strict: boolean; tickMs: number }> {
  const res = await fetch(`${PULSAR_URL}/admin/v2/brokers/configuration/runtime`);
  const config = (await res.json()) as Record<string, string>;
  return {
    strict: config.isDelayedDeliveryDeliverAtTimeStrict === 'true',
    tickMs: Number(config.delayedDeliveryTickTimeMillis ?? 1000),
  };
}

describe('delayed delivery (real broker, Shared subscription)', () => {
  let client: WsPulsarClient;

  beforeEach(() => {
    client = newClient();
  });

  afterEach(() => client.close());

  it('holds deliverAt / deliverAfterMs messages until their time (within the broker tick), and not much longer', async () => {
    const { strict, tickMs } = await delaySettings();
    const early = strict ? 0 : tickMs; // how early the broker's settings allow
    const topic = uniqueTopic('delay');
    const collector = await collect(client, { topic, subscription: 'sub', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic });
    const sentAt = Date.now();
    const afterDue = sentAt + 4000;
    const atDue = sentAt + 6000;
    await Promise.all([
      producer.send({ payload: 'after-4s', deliverAfterMs: 4000 }),
      producer.send({ payload: 'at-6s', deliverAt: atDue }),
      producer.send({ payload: 'now' }),
    ]);

    await collector.until((c) => c.payloads().includes('now'), 5000);
    // Until shortly before the earliest allowed time, only the undelayed message may be there.
    await sleep(Math.max(0, afterDue - early - 200 - Date.now()));
    expect(collector.payloads()).toEqual(['now']);

    await collector.until((c) => c.messages.length === 3, 20_000);
    const at = new Map(collector.messages.map((m) => [m.message.payload.toString(), m.at]));
    expect(at.get('now')! - sentAt).toBeLessThan(2000);
    for (const [payload, due] of [['after-4s', afterDue], ['at-6s', atDue]] as const) {
      const lateness = at.get(payload)! - due;
      expect(lateness).toBeGreaterThanOrEqual(-early);
      expect(lateness).toBeLessThan(2 * tickMs + 1500);
    }
    expect(at.get('at-6s')!).toBeGreaterThan(at.get('after-4s')!);
  }, 40_000);
});
