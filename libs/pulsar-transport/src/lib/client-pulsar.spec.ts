import { lastValueFrom } from 'rxjs';
import { FakePulsarClient } from '../testing/fake-pulsar-client';
import { ClientPulsar } from './client-pulsar';
import { PulsarRecordBuilder } from './pulsar-record.builder';

describe('ClientPulsar', () => {
  let fake: FakePulsarClient;
  let factory: jest.Mock;
  let client: ClientPulsar;

  beforeEach(() => {
    fake = new FakePulsarClient();
    factory = jest.fn(() => fake);
    client = new ClientPulsar({ client: factory });
  });

  afterEach(async () => {
    await client.close();
  });

  it('connect() creates the client once, also for concurrent calls', async () => {
    const [a, b] = await Promise.all([client.connect(), client.connect()]);
    await client.connect();
    expect(a).toBe(fake);
    expect(b).toBe(fake);
    expect(factory).toHaveBeenCalledTimes(1);
    expect(client.unwrap()).toBe(fake);
  });

  it('connect() retries after a failed attempt', async () => {
    factory.mockImplementationOnce(() => {
      throw new Error('down');
    });
    await expect(client.connect()).rejects.toThrow('down');
    await expect(client.connect()).resolves.toBe(fake);
  });

  it('prepare() opens the producers ahead of the first message, which then reuses them', async () => {
    await client.prepare(['orders', 'acme/jobs/due']);
    expect(fake.producers).toHaveLength(2);
    await lastValueFrom(client.emit('orders', { id: 1 }));
    expect(fake.producers).toHaveLength(2);
  });

  it('emit() sends JSON to the pattern topic and emits the message id after the broker ack', async () => {
    const id = await lastValueFrom(client.emit('orders', { id: 1 }));
    expect(id).toBe('fake-1');
    expect(fake.sent).toEqual([
      { topic: 'persistent://public/default/orders', messageId: 'fake-1', payload: '{"id":1}' },
    ]);
  });

  it('maps PulsarRecord fields onto the outgoing message', async () => {
    const at = new Date('2030-01-01T00:00:00Z');
    await lastValueFrom(
      client.emit(
        'persistent://acme/jobs/due',
        new PulsarRecordBuilder({ n: 1 }).setKey('k').setProperties({ a: '1' }).setProperty('b', '2').setDeliverAt(at).build(),
      ),
    );
    await lastValueFrom(client.emit('acme/jobs/due', new PulsarRecordBuilder('s').setDeliverAfter(1500).build()));
    expect(fake.sent[0]).toEqual({
      topic: 'persistent://acme/jobs/due',
      messageId: 'fake-1',
      payload: '{"n":1}',
      key: 'k',
      properties: { a: '1', b: '2' },
      deliverAt: at.getTime(),
    });
    expect(fake.sent[1]).toEqual({
      topic: 'persistent://acme/jobs/due',
      messageId: 'fake-2',
      payload: '"s"',
      deliverAfterMs: 1500,
    });
  });

  it('sends a Buffer payload as it is', async () => {
    await lastValueFrom(client.emit('bin', Buffer.from([1, 2, 3])));
    expect(fake.sent[0].payload).toEqual(Buffer.from([1, 2, 3]));
  });

  it('places local names in the configured tenant/namespace', async () => {
    client = new ClientPulsar({ client: () => fake, tenant: 'acme', namespace: 'jobs' });
    await lastValueFrom(client.emit('due', 1));
    expect(fake.sent[0].topic).toBe('persistent://acme/jobs/due');
  });

  it('creates one producer per topic, lazily, and reuses it', async () => {
    expect(fake.producers).toHaveLength(0);
    await Promise.all([
      lastValueFrom(client.emit('a', 1)),
      lastValueFrom(client.emit('a', 2)),
      lastValueFrom(client.emit('b', 3)),
    ]);
    await lastValueFrom(client.emit('a', 4));
    expect(fake.producers.map((p) => p.topic)).toEqual([
      'persistent://public/default/a',
      'persistent://public/default/b',
    ]);
  });

  it('passes producer options', async () => {
    client = new ClientPulsar({ client: () => fake, producer: { maxPendingMessages: 7 } });
    await lastValueFrom(client.emit('a', 1));
    expect(fake.producers[0].options).toEqual({ topic: 'persistent://public/default/a', maxPendingMessages: 7 });
  });

  it('lets the producers of the batching topics batch, and only those', async () => {
    client = new ClientPulsar({ client: () => fake, producer: { batching: ['a'], batchingMaxPublishDelayMs: 3 } });
    await lastValueFrom(client.emit('a', 1));
    await lastValueFrom(client.emit('b', 2));
    expect(fake.producers.map((p) => p.options)).toEqual([
      { topic: 'persistent://public/default/a', maxPendingMessages: undefined, batchingEnabled: true, batchingMaxPublishDelayMs: 3 },
      { topic: 'persistent://public/default/b', maxPendingMessages: undefined },
    ]);
  });

  it('emit() errors when the send fails', async () => {
    fake.sendError = new Error('timeout');
    await expect(lastValueFrom(client.emit('a', 1))).rejects.toThrow('timeout');
  });

  it('emit() errors on an invalid topic or record', async () => {
    await expect(lastValueFrom(client.emit('a/b', 1))).rejects.toThrow(/Cannot map pattern/);
    await expect(
      lastValueFrom(client.emit('a', new PulsarRecordBuilder(1).setDeliverAfter(-1).build())),
    ).rejects.toThrow(/deliverAfterMs/);
    expect(fake.sent).toHaveLength(0);
  });

  it('refuses send() (request/response) without connecting', async () => {
    await expect(lastValueFrom(client.send('sum', [1, 2]))).rejects.toThrow(/request\/response .* not implemented.*"sum"/);
    expect(factory).not.toHaveBeenCalled();
  });

  it('close() flushes and closes producers and the client; a later emit reconnects', async () => {
    await lastValueFrom(client.emit('a', 1));
    await client.close();
    expect(fake.producers[0].flushed).toBe(1);
    expect(fake.producers[0].closed).toBe(true);
    expect(fake.closed).toBe(true);
    expect(() => client.unwrap()).toThrow(/Not initialized/);

    const second = new FakePulsarClient();
    factory.mockImplementation(() => second);
    await lastValueFrom(client.emit('a', 2));
    expect(second.sent).toHaveLength(1);
  });

  it('emits status changes', async () => {
    const statuses: string[] = [];
    client.status.subscribe((s) => statuses.push(s));
    await client.connect();
    await client.close();
    expect(statuses).toEqual(['connecting', 'connected', 'disconnected']);
  });
});
