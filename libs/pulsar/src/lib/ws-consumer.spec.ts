import { FakeWsBroker, sleep, waitFor, type FakeSession } from '../../test/fake-ws-broker';
import { resolveSettings } from './connection-settings';
import { PulsarClosedError, PulsarConnectError, PulsarTimeoutError } from './errors';
import type { ReceivedMessage } from './pulsar-client.interface';
import { consumerUrl, WsConsumer } from './ws-consumer';

const TOPIC = 'persistent://public/default/unit';

function push(session: FakeSession, id: string, payload: string, extra: Record<string, unknown> = {}): void {
  session.ws.send(
    JSON.stringify({
      messageId: id,
      payload: Buffer.from(payload).toString('base64'),
      properties: {},
      publishTime: '2026-01-02T03:04:05.006Z',
      redeliveryCount: 0,
      ...extra,
    }),
  );
}

describe('consumerUrl', () => {
  it('maps every consumer option to the proxy query parameter', () => {
    const url = new URL(
      consumerUrl('ws://h:8080', {
        topic: 'persistent://t/n/my topic',
        subscription: 'sub/1',
        subscriptionType: 'Key_Shared',
        consumerName: 'c1',
        receiverQueueSize: 50,
        negativeAckRedeliveryDelayMs: 250,
        ackTimeoutMs: 5000,
        deadLetter: { maxRedeliverCount: 3, deadLetterTopic: 't/n/dlq' },
      }),
    );
    expect(url.pathname).toBe('/ws/v2/consumer/persistent/t/n/my%20topic/sub%2F1');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      subscriptionType: 'Key_Shared',
      consumerName: 'c1',
      receiverQueueSize: '50',
      negativeAckRedeliveryDelay: '250',
      ackTimeoutMillis: '5000',
      maxRedeliverCount: '3',
      deadLetterTopic: 'persistent://t/n/dlq',
    });
  });

  it('defaults to Exclusive and rejects values the broker would refuse', () => {
    expect(consumerUrl('ws://h', { topic: 'x', subscription: 's' })).toBe(
      'ws://h/ws/v2/consumer/persistent/public/default/x/s?subscriptionType=Exclusive',
    );
    expect(() => consumerUrl('ws://h', { topic: 'x', subscription: 's', ackTimeoutMs: 500 })).toThrow(RangeError);
    expect(() => consumerUrl('ws://h', { topic: 'x', subscription: 's', deadLetter: { maxRedeliverCount: 0 } })).toThrow(RangeError);
    expect(() => consumerUrl('ws://h', { topic: 'x', subscription: '' })).toThrow(TypeError);
  });
});

describe('WsConsumer (fake broker)', () => {
  let broker: FakeWsBroker;
  let consumer: WsConsumer | undefined;
  const settings = () =>
    resolveSettings({ serviceUrl: broker.url, token: 't0k', reconnectInitialDelayMs: 20, reconnectMaxDelayMs: 100, operationTimeoutMs: 2000 });

  beforeEach(async () => {
    broker = new FakeWsBroker();
    await broker.start();
  });

  afterEach(async () => {
    const c = consumer;
    consumer = undefined;
    if (c) await c.close();
    await broker.stop();
  });

  async function started(options: Partial<ConstructorParameters<typeof WsConsumer>[1]> = {}): Promise<WsConsumer> {
    consumer = new WsConsumer(settings(), { topic: TOPIC, subscription: 'sub', subscriptionType: 'Shared', ...options });
    await consumer.start();
    await waitFor(() => broker.openSessions.length === 1);
    return consumer;
  }

  it('queues pushed messages for receive() in order and decodes them', async () => {
    const c = await started();
    expect(broker.sessions[0].headers.authorization).toBe('Bearer t0k');
    const session = broker.sessions[0];
    const waiting = c.receive();
    push(session, 'id1', 'one', { key: 'k', properties: { a: 'b' }, redeliveryCount: 2 });
    push(session, 'id2', 'two');
    const first = await waiting;
    expect(first).toMatchObject({ topic: TOPIC, messageId: 'id1', key: 'k', properties: { a: 'b' }, redeliveryCount: 2 });
    expect(first.payload.toString()).toBe('one');
    expect(first.publishTime).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
    expect((await c.receive()).payload.toString()).toBe('two');
  });

  it('receive(timeout) rejects when nothing arrives and then takes no message', async () => {
    const c = await started();
    await expect(c.receive(50)).rejects.toBeInstanceOf(PulsarTimeoutError);
    push(broker.sessions[0], 'id1', 'one');
    await waitFor(() => c.buffered === 1);
    expect((await c.receive(1000)).messageId).toBe('id1');
  });

  it('writes ack and negative-ack frames and resolves once written', async () => {
    const c = await started();
    push(broker.sessions[0], 'id1', 'one');
    const m = await c.receive();
    await c.acknowledge(m);
    await c.negativeAcknowledge(m);
    await waitFor(() => broker.frames.length === 2);
    expect(broker.frames.map((f) => JSON.parse(f) as unknown)).toEqual([
      { messageId: 'id1' },
      { type: 'negativeAcknowledge', messageId: 'id1' },
    ]);
  });

  it('does not lose an ack issued while disconnected: it is written after the reconnect', async () => {
    const c = await started();
    push(broker.sessions[0], 'id1', 'one');
    push(broker.sessions[0], 'id2', 'two');
    const m1 = await c.receive();
    await waitFor(() => c.buffered === 1);
    await broker.stop();
    await waitFor(() => c.buffered === 0, 2000, 'buffered copies dropped on disconnect');
    let acked = false;
    const ack = c.acknowledge(m1).then(() => (acked = true));
    const nack = c.negativeAcknowledge(m1);
    await sleep(150);
    expect(acked).toBe(false);
    await broker.start();
    await ack;
    await nack; // stale session: resolves without a frame, the broker already redelivers it
    await waitFor(() => broker.sessions.length === 2 && broker.sessions[1].frames.length === 1);
    await sleep(50);
    expect(broker.sessions[1].frames).toEqual(['{"messageId":"id1"}']);
  });

  it('drops the ack of a batched message whose session is gone (its whole batch is redelivered); plain acks still go out', async () => {
    // MessageIdData protobuf: ledgerId 5, entryId 7, and for the batched one batch_index 2, batch_size 4.
    const plain = Buffer.from([0x08, 0x05, 0x10, 0x07]).toString('base64');
    const batched = Buffer.from([0x08, 0x05, 0x10, 0x07, 0x20, 0x02, 0x30, 0x04]).toString('base64');
    const c = await started();
    push(broker.sessions[0], plain, 'one');
    push(broker.sessions[0], batched, 'two');
    const m1 = await c.receive();
    const m2 = await c.receive();
    await broker.stop();
    await sleep(50);
    const acks = [c.acknowledge(m1), c.acknowledge(m2)];
    await broker.start();
    await Promise.all(acks);
    await waitFor(() => broker.sessions.length === 2 && broker.sessions[1].frames.length === 1);
    await sleep(50);
    expect(broker.sessions[1].frames).toEqual([JSON.stringify({ messageId: plain })]);
    // On the session that delivered it, a batched message is acked as usual.
    push(broker.sessions[1], batched, 'two again');
    await c.acknowledge(await c.receive());
    await waitFor(() => broker.sessions[1].frames.length === 2);
    expect(broker.sessions[1].frames[1]).toBe(JSON.stringify({ messageId: batched }));
  });

  it('close rejects pending receive() and unwritten acks, and closes the session normally', async () => {
    const c = await started();
    push(broker.sessions[0], 'id1', 'one');
    const m1 = await c.receive();
    const pendingReceive = c.receive().catch((e: unknown) => e);
    broker.dropAll();
    await waitFor(() => broker.openSessions.length === 0);
    broker.refuse = { status: 503, message: 'restarting', times: 1000 };
    await sleep(30);
    const ack = c.acknowledge(m1);
    await c.close();
    consumer = undefined;
    expect(await pendingReceive).toBeInstanceOf(PulsarClosedError);
    await expect(ack).rejects.toBeInstanceOf(PulsarClosedError);
    await expect(c.receive()).rejects.toBeInstanceOf(PulsarClosedError);
    await expect(c.acknowledge(m1)).rejects.toBeInstanceOf(PulsarClosedError);
  });

  it('sends a normal close frame on close', async () => {
    const c = await started();
    await c.close();
    consumer = undefined;
    await waitFor(() => broker.sessions[0].closeCode !== undefined);
    expect(broker.sessions[0].closeCode).toBe(1000);
  });

  it('hands messages to a listener instead of receive()', async () => {
    const got: ReceivedMessage[] = [];
    const c = await started({ listener: (m, self) => {
      got.push(m);
      void self.acknowledge(m);
    } });
    push(broker.sessions[0], 'id1', 'one');
    await waitFor(() => got.length === 1 && broker.frames.length === 1);
    expect(broker.frames[0]).toBe('{"messageId":"id1"}');
    await expect(c.receive()).rejects.toThrow(/listener/);
  });

  it('fails subscribe at once when the proxy refuses with 409 (busy exclusive subscription)', async () => {
    broker.refuse = { status: 409, message: 'Failed to create producer/consumer: {&quot;errorMsg&quot;:&quot;Exclusive consumer is already connected&quot;}', times: 1 };
    const c = new WsConsumer(settings(), { topic: TOPIC, subscription: 'sub' });
    const error = await c.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PulsarConnectError);
    expect((error as PulsarConnectError).status).toBe(409);
    expect((error as Error).message).toContain('Exclusive consumer is already connected');
  });
});
