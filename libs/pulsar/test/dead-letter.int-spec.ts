import type { ReceivedMessage, WsPulsarClient } from '../src/index';
import { collect, newAdmin, newClient, sleep, uniqueTopic } from './pulsar-it';

describe('dead-letter policy (real broker)', () => {
  let client: WsPulsarClient;

  beforeEach(() => {
    client = newClient();
  });

  afterEach(() => client.close());

  async function poisonRun(deadLetterTopic: string | undefined, topic: string, dlq: string): Promise<void> {
    // The dead-letter topic gets its subscription first, so nothing published to it is missed.
    await newAdmin().ensureSubscription(dlq, 'dlq-reader', 'Earliest');
    const deliveries: ReceivedMessage[] = [];
    const main = await collect(
      client,
      {
        topic,
        subscription: 'work',
        subscriptionType: 'Shared',
        negativeAckRedeliveryDelayMs: 200,
        deadLetter: { maxRedeliverCount: 2, deadLetterTopic },
      },
      (m, c) => {
        if (m.payload.toString() === 'poison') {
          deliveries.push(m);
          c.negativeAcknowledge(m).catch(() => undefined);
        } else {
          c.acknowledge(m).catch(() => undefined);
        }
      },
    );
    const dead = await collect(client, { topic: dlq, subscription: 'dlq-reader', subscriptionType: 'Shared' });
    const producer = await client.createProducer({ topic });
    await producer.send({ payload: 'poison', key: 'job-1', properties: { job: '1' } });
    await producer.send({ payload: 'healthy' });

    await dead.until((c) => c.messages.length >= 1, 30_000);
    const [{ message }] = dead.messages;
    expect(message.payload.toString()).toBe('poison');
    expect(message.key).toBe('job-1');
    expect(message.properties.job).toBe('1');
    // Delivered with redeliveryCount 0..maxRedeliverCount, then dead-lettered instead of redelivered.
    expect(deliveries.map((m) => m.redeliveryCount)).toEqual([0, 1, 2]);
    await sleep(1500);
    expect(deliveries).toHaveLength(3);
    expect(dead.messages).toHaveLength(1);
    expect(main.payloads().filter((p) => p === 'healthy')).toHaveLength(1);
  }

  it('moves a message to the named dead-letter topic after maxRedeliverCount redeliveries', async () => {
    const topic = uniqueTopic('dlq');
    await poisonRun(`${topic}-custom-dlq`, topic, `${topic}-custom-dlq`);
  }, 60_000);

  it('defaults the dead-letter topic to <topic>-<subscription>-DLQ', async () => {
    const topic = uniqueTopic('dlq-default');
    await poisonRun(undefined, topic, `${topic}-work-DLQ`);
  }, 60_000);
});
