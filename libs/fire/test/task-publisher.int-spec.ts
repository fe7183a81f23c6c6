import { MESSAGE_PROPERTIES, TOPICS } from '@timer/contracts';
import { PeekedMessage, PulsarAdmin, topicName } from '@timer/pulsar';
import { ClientPulsar } from '@timer/pulsar-transport';
import { deletePulsarNamespace, testEnv, uniqueId } from '@timer/testing';
import { TaskPublisher, taskMessage } from '../src';

// The task messages every role sends, through the one builder and the real broker: what an executor
// reads back (payload, key, properties, lane) is what the contract says, for one fire and for many.
jest.setTimeout(60_000);

const env = testEnv();
const NAMESPACE = uniqueId('fire');
const NOW = Date.UTC(2030, 0, 1);
const SUBSCRIPTION = 'it-fire';

const admin = new PulsarAdmin({ serviceUrl: env.pulsarUrl });
const topic = (local: string) => topicName(env.pulsarTenant, NAMESPACE, local);
let client: ClientPulsar;
let publisher: TaskPublisher;

beforeAll(async () => {
  await admin.ensureNamespace(`${env.pulsarTenant}/${NAMESPACE}`);
  for (const t of [TOPICS.tasks, TOPICS.catchUp]) {
    await admin.ensureTopic(topic(t));
    await admin.ensureSubscription(topic(t), SUBSCRIPTION, 'Earliest');
  }
  client = new ClientPulsar({ client: { serviceUrl: env.pulsarUrl }, tenant: env.pulsarTenant, namespace: NAMESPACE });
  await client.connect();
  publisher = new TaskPublisher(client, { now: () => NOW });
});

afterAll(async () => {
  await client?.close();
  await deletePulsarNamespace(env.pulsarUrl, `${env.pulsarTenant}/${NAMESPACE}`).catch(() => undefined);
});

const decoded = (m: PeekedMessage) => ({ key: m.key, fireId: m.properties[MESSAGE_PROPERTIES.fireId], runNow: m.properties[MESSAGE_PROPERTIES.runNow], payload: JSON.parse(m.payload.toString('utf8')) as unknown });

describe('TaskPublisher with taskMessage against the real broker', () => {
  it('sends one fire in the plain form, keyed by its timer, with its fire id and the caller\'s properties', async () => {
    await publisher.publish(taskMessage({ timerId: '7', runAt: NOW }), { [MESSAGE_PROPERTIES.runNow]: '1' });
    const [m] = await admin.peekMessages(topic(TOPICS.tasks), SUBSCRIPTION, 1);
    expect(decoded(m)).toEqual({ key: '7', fireId: `7-${NOW}`, runNow: '1', payload: { timerId: '7', runAt: NOW, fireId: `7-${NOW}`, attempt: 1 } });
  });

  it('sends many fires one message per lane: on-time ones together, a late backfill fire on the catch-up lane', async () => {
    const late = NOW - 60_000;
    await publisher.publishBatch([taskMessage({ timerId: '8', runAt: NOW }), taskMessage({ timerId: '9', runAt: NOW }), taskMessage({ timerId: '10', runAt: late }, { attempt: 2, backfill: true })]);
    const onTime = await admin.peekMessages(topic(TOPICS.tasks), SUBSCRIPTION, 2);
    expect(onTime[1].key).toBe('8');
    expect(decoded(onTime[1]).payload).toEqual({ tasks: [{ timerId: '8', runAt: NOW, attempt: 1 }, { timerId: '9', runAt: NOW, attempt: 1 }] });
    const [catchUp] = await admin.peekMessages(topic(TOPICS.catchUp), SUBSCRIPTION, 1);
    expect(decoded(catchUp)).toEqual({ key: '10', fireId: `10-${late}`, runNow: undefined, payload: { timerId: '10', runAt: late, fireId: `10-${late}`, attempt: 2, backfill: true } });
  });
});
