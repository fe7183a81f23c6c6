import { FakeWsBroker, sleep, waitFor, type FakeSession } from '../../test/fake-ws-broker';
import { resolveSettings } from './connection-settings';
import { PulsarClosedError, PulsarConnectError, PulsarSendError, PulsarTimeoutError } from './errors';
import type { PulsarClientOptions } from './pulsar-client.interface';
import { WsProducer } from './ws-producer';

const TOPIC = 'persistent://public/default/unit';

function answer(session: FakeSession, frame: string, result = 'ok'): void {
  const { context } = JSON.parse(frame) as { context: string };
  session.ws.send(JSON.stringify({ result, messageId: `id-${context}`, context, errorMsg: result === 'ok' ? undefined : 'boom' }));
}

describe('WsProducer (fake broker)', () => {
  let broker: FakeWsBroker;
  let producer: WsProducer | undefined;
  let onFrame: (session: FakeSession, frame: string) => void;

  const settings = (extra: Partial<PulsarClientOptions> = {}) =>
    resolveSettings({ serviceUrl: broker.url, reconnectInitialDelayMs: 20, reconnectMaxDelayMs: 100, operationTimeoutMs: 2000, ...extra });

  beforeEach(async () => {
    onFrame = (session, frame) => answer(session, frame);
    broker = new FakeWsBroker({ onFrame: (s, f) => onFrame(s, f) });
    await broker.start();
  });

  afterEach(async () => {
    const p = producer;
    producer = undefined;
    if (p) await p.close();
    await broker.stop();
  });

  it('resolves each send with the message id matched by context, whatever the answer order', async () => {
    const held: Array<[FakeSession, string]> = [];
    onFrame = (s, f) => held.push([s, f]);
    producer = new WsProducer(settings({ token: 'secret' }), { topic: TOPIC, producerName: 'p1' });
    await producer.start();
    const sends = [1, 2, 3].map((i) => producer!.send({ payload: `m${i}` }));
    await waitFor(() => held.length === 3);
    for (const [s, f] of held.reverse()) answer(s, f);
    const ids = await Promise.all(sends);
    const contexts = broker.frames.map((f) => (JSON.parse(f) as { context: string }).context);
    expect(ids).toEqual(contexts.map((c) => `id-${c}`));
    expect(new Set(contexts).size).toBe(3);
    const session = broker.sessions[0];
    expect(session.headers.authorization).toBe('Bearer secret');
    expect(session.url).toMatch(/^\/ws\/v2\/producer\/persistent\/public\/default\/unit\?/);
    expect(session.url).toContain('producerName=p1');
    expect(session.url).toContain('sendTimeoutMillis=30000');
  });

  it('keeps at most maxPendingMessages sends unanswered; the rest wait for room, not fail', async () => {
    const held: Array<[FakeSession, string]> = [];
    onFrame = (s, f) => held.push([s, f]);
    producer = new WsProducer(settings(), { topic: TOPIC, maxPendingMessages: 3 });
    await producer.start();
    const sends = Array.from({ length: 10 }, (_, i) => producer!.send({ payload: `m${i}` }));
    await sleep(100);
    expect(held.length).toBe(3);
    expect(producer.outstanding).toBe(10);
    onFrame = (s, f) => answer(s, f);
    for (const [s, f] of held.splice(0)) answer(s, f);
    await Promise.all(sends);
    expect(broker.frames.length).toBe(10);
    const payloads = broker.frames.map((f) => Buffer.from((JSON.parse(f) as { payload: string }).payload, 'base64').toString());
    expect(payloads).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
  });

  it('rejects with PulsarSendError when the broker refuses a message', async () => {
    onFrame = (s, f) => answer(s, f, 'send-error:8');
    producer = new WsProducer(settings(), { topic: TOPIC });
    await producer.start();
    const error = await producer.send({ payload: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PulsarSendError);
    expect((error as PulsarSendError).result).toBe('send-error:8');
    expect((error as PulsarSendError).errorMsg).toBe('boom');
  });

  it('fails sends that get no answer within the send timeout, and frees their room', async () => {
    onFrame = () => undefined;
    producer = new WsProducer(settings({ sendTimeoutMs: 200 }), { topic: TOPIC, maxPendingMessages: 1 });
    await producer.start();
    const started = Date.now();
    const results = await Promise.allSettled([producer.send({ payload: 'a' }), producer.send({ payload: 'b' })]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(PulsarTimeoutError);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(producer.outstanding).toBe(0);
  });

  it('re-sends unanswered messages after a reconnect (at-least-once) and resolves them', async () => {
    let drop = true;
    onFrame = (s, f) => {
      if (!drop) answer(s, f);
    };
    producer = new WsProducer(settings(), { topic: TOPIC });
    await producer.start();
    const sends = [1, 2, 3].map((i) => producer!.send({ payload: `m${i}`, key: `k${i}` }));
    await waitFor(() => broker.frames.length === 3);
    drop = false;
    broker.dropAll();
    const ids = await Promise.all(sends);
    expect(broker.sessions.length).toBe(2);
    const first = broker.sessions[0].frames;
    const second = broker.sessions[1].frames;
    expect(second).toEqual(first);
    expect(ids).toEqual(second.map((f) => `id-${(JSON.parse(f) as { context: string }).context}`));
  });

  it('queues sends while the broker is down and writes them once it is back', async () => {
    producer = new WsProducer(settings(), { topic: TOPIC });
    await producer.start();
    await broker.stop();
    const send = producer.send({ payload: 'while-down' });
    await sleep(150);
    await broker.start();
    await expect(send).resolves.toMatch(/^id-/);
  });

  it('spreads sends over several sessions with distinct producer names', async () => {
    producer = new WsProducer(settings(), { topic: TOPIC, connections: 3, producerName: 'multi' });
    await producer.start();
    await Promise.all(Array.from({ length: 30 }, (_, i) => producer!.send({ payload: `m${i}` })));
    expect(broker.sessions.length).toBe(3);
    expect(broker.sessions.map((s) => new URL(s.url, 'http://x').searchParams.get('producerName')).sort()).toEqual([
      'multi-0',
      'multi-1',
      'multi-2',
    ]);
    for (const s of broker.sessions) expect(s.frames.length).toBeGreaterThan(0);
  });

  it('flush waits for earlier sends; close waits for in-flight sends, then refuses new ones', async () => {
    onFrame = (s, f) => setTimeout(() => answer(s, f), 150);
    producer = new WsProducer(settings(), { topic: TOPIC });
    await producer.start();
    const settled: string[] = [];
    const a = producer.send({ payload: 'a' }).then(() => settled.push('a'));
    await producer.flush();
    expect(settled).toEqual(['a']);
    const b = producer.send({ payload: 'b' }).then(() => settled.push('b'));
    await producer.close();
    expect(settled).toEqual(['a', 'b']);
    await Promise.all([a, b]);
    await expect(producer.send({ payload: 'c' })).rejects.toBeInstanceOf(PulsarClosedError);
    await waitFor(() => broker.sessions[0].closeCode !== undefined);
    expect(broker.sessions[0].closeCode).toBe(1000);
    producer = undefined;
  });

  it('fails at once on a 4xx refusal, and retries a 5xx until the broker accepts', async () => {
    broker.refuse = { status: 401, message: 'Authentication required', times: 1 };
    const refused = new WsProducer(settings(), { topic: TOPIC });
    const error = await refused.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PulsarConnectError);
    expect((error as PulsarConnectError).status).toBe(401);
    expect((error as PulsarConnectError).message).toContain('Authentication required');

    broker.refuse = { status: 503, message: 'not ready', times: 2 };
    producer = new WsProducer(settings(), { topic: TOPIC });
    await producer.start();
    expect(broker.refuse.times).toBe(0);
    await expect(producer.send({ payload: 'x' })).resolves.toMatch(/^id-/);
  });

  it('gives up on transient failures after operationTimeoutMs', async () => {
    broker.refuse = { status: 500, message: 'down', times: 1000 };
    const p = new WsProducer(settings({ operationTimeoutMs: 300 }), { topic: TOPIC });
    const started = Date.now();
    await expect(p.start()).rejects.toMatchObject({ status: 500 });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
