import { Controller, INestMicroservice, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { PulsarAdminError } from '@timer/pulsar';
import type { ReceivedMessage } from '@timer/pulsar';
import { Observable, timer } from 'rxjs';
import { map } from 'rxjs/operators';
import { MESSAGE_PROPERTIES } from '@timer/contracts';
import { FakeProvisioner, FakePulsarClient } from '../testing/fake-pulsar-client';
import { PulsarContext } from './pulsar.context';
import type { PulsarDeadLetter, ServerPulsarOptions } from './pulsar-transport.options';
import { ServerPulsar } from './server-pulsar';

const TOPIC = 'persistent://public/default/orders';
const SUB = 'nest-pulsar';

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves once `check` holds (polls; fails after `timeoutMs`). */
async function until(check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error('condition not met in time');
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

function listen(server: ServerPulsar): Promise<void> {
  return new Promise((resolve, reject) => server.listen((err?: unknown) => (err ? reject(err) : resolve())));
}

function send(fake: FakePulsarClient, data: unknown, topic = TOPIC, extra: Partial<{ key: string; properties: Record<string, string> }> = {}) {
  return fake.publish(topic, { payload: JSON.stringify(data), ...extra });
}

describe('ServerPulsar', () => {
  let fake: FakePulsarClient;
  let admin: FakeProvisioner;
  let server: ServerPulsar;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']);
  });

  beforeEach(() => {
    fake = new FakePulsarClient();
    admin = new FakeProvisioner(fake);
    server = new ServerPulsar({ client: () => fake, admin });
  });

  afterEach(async () => {
    await server.close();
  });

  it('provisions tenant, namespace, topic and subscription, then subscribes one Shared consumer per pattern', async () => {
    server.addHandler('orders', async () => undefined, true);
    server.addHandler('acme/billing/invoices', async () => undefined, true);
    await listen(server);
    expect(admin.calls).toEqual([
      'tenant public',
      'tenant acme',
      'namespace public/default',
      'namespace acme/billing',
      `topic ${TOPIC}`,
      'topic persistent://acme/billing/invoices',
      `subscription ${TOPIC} ${SUB} Earliest`,
      `subscription persistent://acme/billing/invoices ${SUB} Earliest`,
    ]);
    expect(fake.consumers.map((c) => c.options)).toEqual([
      { topic: TOPIC, subscription: SUB, subscriptionType: 'Shared' },
      { topic: 'persistent://acme/billing/invoices', subscription: SUB, subscriptionType: 'Shared' },
    ]);
    expect(server.unwrap()).toBe(fake);
  });

  it('passes per-pattern consumer settings over the defaults, and skips provisioning when off', async () => {
    server = new ServerPulsar({
      client: () => fake,
      admin,
      provision: false,
      tenant: 'acme',
      namespace: 'jobs',
      consumer: { subscription: 'svc', receiverQueueSize: 50, negativeAckRedeliveryDelayMs: 100 },
      consumers: {
        due: { subscriptionType: 'Key_Shared', deadLetter: { maxRedeliverCount: 3 }, concurrency: 2 },
      },
    });
    server.addHandler('due', async () => undefined, true);
    await listen(server);
    expect(admin.calls).toEqual([]);
    expect(fake.consumers[0].options).toEqual({
      topic: 'persistent://acme/jobs/due',
      subscription: 'svc',
      subscriptionType: 'Key_Shared',
      receiverQueueSize: 50,
      negativeAckRedeliveryDelayMs: 100,
      deadLetter: { maxRedeliverCount: 3 },
    });
  });

  it('acks only after an async handler has resolved', async () => {
    const gate = deferred();
    const seen: unknown[] = [];
    server.addHandler(
      'orders',
      async (data: unknown) => {
        seen.push(data);
        await gate.promise;
      },
      true,
    );
    await listen(server);
    send(fake, { id: 1 });
    await until(() => seen.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual([{ id: 1 }]);
    expect(fake.acks).toHaveLength(0);
    gate.resolve();
    await until(() => fake.acks.length === 1);
    expect(fake.nacks).toHaveLength(0);
  });

  it('acks only after an observable handler has completed', async () => {
    const values: number[] = [];
    let completed = false;
    server.addHandler(
      'orders',
      async () =>
        new Observable<number>((subscriber) => {
          const t1 = setTimeout(() => subscriber.next(1), 5);
          const t2 = setTimeout(() => {
            values.push(2);
            subscriber.next(2);
            completed = true;
            subscriber.complete();
          }, 40);
          return () => {
            clearTimeout(t1);
            clearTimeout(t2);
          };
        }),
      true,
    );
    await listen(server);
    send(fake, 'x');
    await new Promise((r) => setTimeout(r, 20));
    expect(fake.acks).toHaveLength(0);
    await until(() => fake.acks.length === 1);
    expect(completed).toBe(true);
    expect(values).toEqual([2]);
  });

  it('acks an observable that completes without emitting', async () => {
    server.addHandler('orders', async () => timer(5).pipe(map(() => undefined)), true);
    await listen(server);
    send(fake, 'x');
    await until(() => fake.acks.length === 1);
  });

  it('negatively acks when the handler throws, and the redelivery is handled again', async () => {
    const contexts: PulsarContext[] = [];
    server.addHandler(
      'orders',
      async (_data: unknown, ctx?: PulsarContext) => {
        contexts.push(ctx!);
        if (ctx!.getRedeliveryCount() === 0) {
          throw new Error('first time fails');
        }
      },
      true,
    );
    await listen(server);
    send(fake, { id: 7 });
    await until(() => fake.acks.length === 1);
    expect(fake.nacks).toHaveLength(1);
    expect(contexts.map((c) => c.getRedeliveryCount())).toEqual([0, 1]);
    expect(fake.acks[0].message.messageId).toBe(fake.nacks[0].message.messageId);
  });

  it('negatively acks when an observable handler errors', async () => {
    server.addHandler('orders', async () => new Observable((s) => s.error(new Error('boom'))), true);
    server.addHandler('acme/x/y', async () => undefined, true);
    await listen(server);
    fake.consumers[0].options.negativeAckRedeliveryDelayMs = 60_000; // keep it from looping
    send(fake, 1);
    await until(() => fake.nacks.length === 1);
    expect(fake.acks).toHaveLength(0);
  });

  it('negatively acks a message routed to a pattern without handler (and can be told to ack)', async () => {
    const errors: unknown[] = [];
    const routeTo = 'nowhere';
    const deserializer = { deserialize: (m: ReceivedMessage) => ({ pattern: routeTo, data: m.payload }) };
    server = new ServerPulsar({ client: () => fake, admin, deserializer, consumer: { negativeAckRedeliveryDelayMs: 60_000 } });
    server.on('error', (err) => errors.push(err));
    server.addHandler('orders', async () => undefined, true);
    await listen(server);
    send(fake, 1);
    await until(() => fake.nacks.length === 1);
    expect(fake.acks).toHaveLength(0);
    expect(String(errors[0])).toContain('nowhere');
    await server.close();

    fake = new FakePulsarClient();
    server = new ServerPulsar({ client: () => fake, admin: new FakeProvisioner(fake), deserializer, onMissingHandler: 'ack' });
    server.addHandler('orders', async () => undefined, true);
    await listen(server);
    send(fake, 1);
    await until(() => fake.acks.length === 1);
    expect(fake.nacks).toHaveLength(0);
  });

  it('negatively acks a message the deserializer rejects', async () => {
    server = new ServerPulsar({
      client: () => fake,
      admin,
      consumer: { negativeAckRedeliveryDelayMs: 60_000 },
      deserializer: {
        deserialize: () => {
          throw new Error('bad payload');
        },
      },
    });
    const handler = jest.fn(async () => undefined);
    server.addHandler('orders', handler, true);
    await listen(server);
    send(fake, 1);
    await until(() => fake.nacks.length === 1);
    expect(handler).not.toHaveBeenCalled();
  });

  it('passes JSON data to the handler', async () => {
    const seen: unknown[] = [];
    server.addHandler('orders', async (data: unknown) => void seen.push(data), true);
    await listen(server);
    send(fake, { a: [1, 'b'] });
    send(fake, 'text');
    await until(() => fake.acks.length === 2);
    expect(seen).toEqual([{ a: [1, 'b'] }, 'text']);
  });

  it('exposes the message through PulsarContext', async () => {
    let ctx: PulsarContext | undefined;
    server.addHandler('orders', async (_d: unknown, c?: PulsarContext) => void (ctx = c), true);
    await listen(server);
    const id = send(fake, 1, TOPIC, { key: 'k1', properties: { a: 'b' } });
    await until(() => fake.acks.length === 1);
    expect(ctx).toBeInstanceOf(PulsarContext);
    expect(ctx!.getMessageId()).toBe(id);
    expect(ctx!.getKey()).toBe('k1');
    expect(ctx!.getProperties()).toEqual({ a: 'b' });
    expect(ctx!.getRedeliveryCount()).toBe(0);
    expect(typeof ctx!.getPublishTime()).toBe('number');
    expect(ctx!.getTopic()).toBe(TOPIC);
    expect(ctx!.getConsumer()).toBe(fake.consumers[0]);
    expect(ctx!.getPattern()).toBe('orders');
    expect(ctx!.getMessage().messageId).toBe(id);
  });

  it('runs at most `concurrency` handlers of a consumer at a time', async () => {
    server = new ServerPulsar({ client: () => fake, admin, consumer: { concurrency: 3 } });
    let running = 0;
    let peak = 0;
    server.addHandler(
      'orders',
      async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 10));
        running--;
      },
      true,
    );
    await listen(server);
    for (let i = 0; i < 12; i++) {
      send(fake, i);
    }
    await until(() => fake.acks.length === 12);
    expect(peak).toBe(3);
  });

  it('with concurrency 1 handles messages one after the other in order', async () => {
    server = new ServerPulsar({ client: () => fake, admin, consumer: { concurrency: 1 } });
    const order: number[] = [];
    server.addHandler(
      'orders',
      async (n: number) => {
        await new Promise((r) => setTimeout(r, 10 - n));
        order.push(n);
      },
      true,
    );
    await listen(server);
    for (let i = 0; i < 5; i++) {
      send(fake, i);
    }
    await until(() => fake.acks.length === 5);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('close() stops receiving, waits for in-flight handlers to ack, then closes consumers and client', async () => {
    const gate = deferred();
    let started = 0;
    server.addHandler(
      'orders',
      async () => {
        started++;
        await gate.promise;
      },
      true,
    );
    await listen(server);
    send(fake, 1);
    send(fake, 2);
    await until(() => started === 2);
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(false);
    expect(fake.consumers[0].closed).toBe(false);
    send(fake, 3); // arrives while closing: not handled
    gate.resolve();
    await closing;
    expect(fake.acks.map((a) => JSON.parse(a.message.payload.toString()))).toEqual([1, 2]);
    expect(started).toBe(2);
    expect(fake.consumers[0].closed).toBe(true);
    expect(fake.closed).toBe(true);
    expect(() => server.unwrap()).toThrow(/Not initialized/);
    // the message left unacked is back on the subscription for the next consumer
    expect(fake.backlog(TOPIC, SUB)).toBe(1);
  });

  it('close() gives up waiting after closeTimeoutMs', async () => {
    server = new ServerPulsar({ client: () => fake, admin, closeTimeoutMs: 50 });
    server.addHandler('orders', () => new Promise<never>(() => undefined), true);
    await listen(server);
    send(fake, 1);
    await new Promise((r) => setTimeout(r, 10));
    const t0 = Date.now();
    await server.close();
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(fake.consumers[0].closed).toBe(true);
    expect(fake.acks).toHaveLength(0);
  });

  it('close() during listen closes what the start opened', async () => {
    const gate = deferred();
    const subscribe = fake.subscribe.bind(fake);
    fake.subscribe = async (options) => {
      await gate.promise;
      return subscribe(options);
    };
    const handler = jest.fn(async () => undefined);
    server.addHandler('orders', handler, true);
    const listening = listen(server);
    await new Promise((r) => setTimeout(r, 10));
    const closing = server.close();
    gate.resolve();
    await Promise.all([listening, closing]);
    expect(fake.consumers).toHaveLength(1);
    expect(fake.consumers[0].closed).toBe(true);
    expect(fake.closed).toBe(true);
    send(fake, 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(handler).not.toHaveBeenCalled();
  });

  it('refuses request/response handlers at listen, naming the pattern', async () => {
    server.addHandler('orders', async () => undefined, true);
    server.addHandler('get-order', async () => 1, false);
    await expect(listen(server)).rejects.toThrow(/@MessagePattern.*"get-order"/);
    expect(fake.consumers).toHaveLength(0);
  });

  it('refuses a pattern that is no topic name', async () => {
    server.addHandler({ cmd: 'x' }, async () => undefined, true);
    await expect(listen(server)).rejects.toThrow(/cannot map @EventPattern/);
  });

  it('reports a failed start through the listen callback and cleans up', async () => {
    const failing = new ServerPulsar({
      client: () => fake,
      admin: {
        ...admin,
        ensureTenant: async () => {
          throw new Error('403 forbidden');
        },
        ensureNamespace: async () => undefined,
        ensureTopic: async () => undefined,
        ensureSubscription: async () => undefined,
      },
    });
    failing.addHandler('orders', async () => undefined, true);
    await expect(listen(failing)).rejects.toThrow('403 forbidden');
    expect(fake.closed).toBe(true);
  });

  it('needs an admin to provision when the client comes from a factory', async () => {
    server = new ServerPulsar({ client: () => fake });
    server.addHandler('orders', async () => undefined, true);
    await expect(listen(server)).rejects.toThrow(/provisioning needs an admin/);
  });

  it('refuses a consumer initialPosition that provisioning would not honour', async () => {
    server = new ServerPulsar({ client: () => fake, admin, consumer: { initialPosition: 'Latest' } });
    server.addHandler('orders', async () => undefined, true);
    await expect(listen(server)).rejects.toThrow(/initialPosition Latest.*provisioning creates subscriptions at Earliest/);
    expect(admin.calls).toEqual([]);
  });

  it('emits status changes', async () => {
    const statuses: string[] = [];
    server.status.subscribe((s) => statuses.push(s));
    server.addHandler('orders', async () => undefined, true);
    await listen(server);
    await server.close();
    expect(statuses).toEqual(['connecting', 'connected', 'disconnected']);
  });

  it('rejects unknown events in on()', () => {
    expect(() => server.on('nope' as 'error', () => undefined)).toThrow(/unknown event/);
  });
});

describe('ServerPulsar with messages it cannot decode', () => {
  const DLQ = `${TOPIC}-${SUB}-DLQ`;
  let fake: FakePulsarClient;
  let server: ServerPulsar;
  let handler: jest.Mock;
  let deadLetters: PulsarDeadLetter[];
  let errors: unknown[];

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  async function start(options: Partial<ServerPulsarOptions> = {}): Promise<void> {
    server = new ServerPulsar({ client: () => fake, admin: new FakeProvisioner(fake), ...options });
    server.on('deadLetter', (d) => deadLetters.push(d));
    server.on('error', (e) => errors.push(e));
    server.addHandler('orders', handler, true);
    await listen(server);
  }

  beforeEach(() => {
    fake = new FakePulsarClient();
    handler = jest.fn(async () => undefined);
    deadLetters = [];
    errors = [];
  });
  afterEach(() => server.close());

  it.each([
    ['not UTF-8', Buffer.from([0xff, 0xfe, 0x7b, 0x00]), /payload is not UTF-8 \(4 bytes\)/],
    ['not JSON', Buffer.from('{"timerId": 1,'), /payload is not JSON \(14 bytes\)/],
  ])('redelivers a payload that is %s twice, then dead-letters it as it came and acks it', async (_what, payload, error) => {
    fake.subscription(DLQ, 'inspect');
    await start();
    const id = fake.publish(TOPIC, { payload, key: 'k1', properties: { origin: 'test' } });
    await until(() => fake.acks.length === 1);
    expect(handler).not.toHaveBeenCalled();
    expect(fake.nacks.map((n) => n.message.redeliveryCount)).toEqual([0, 1]);
    expect(fake.acks[0].message).toMatchObject({ messageId: id, redeliveryCount: 2 });
    const dead = fake.sent.filter((m) => m.topic === DLQ);
    expect(dead).toHaveLength(1);
    expect(Buffer.compare(dead[0].payload as Buffer, payload)).toBe(0);
    expect(dead[0].key).toBe('k1');
    expect(dead[0].properties).toEqual({
      origin: 'test',
      REAL_TOPIC: TOPIC,
      ORIGIN_MESSAGE_ID: id,
      [MESSAGE_PROPERTIES.reason]: 'undecodable',
      [MESSAGE_PROPERTIES.error]: expect.stringMatching(error),
    });
    expect(fake.backlog(DLQ, 'inspect')).toBe(1);
    expect(deadLetters).toEqual([
      { pattern: 'orders', topic: TOPIC, subscription: SUB, messageId: id, deadLetterTopic: DLQ, deliveries: 3, reason: 'undecodable', error: expect.stringMatching(error) },
    ]);
    expect(errors).toEqual([]);
    await new Promise((r) => setTimeout(r, 20));
    expect(fake.nacks).toHaveLength(2);
    expect(fake.backlog(TOPIC, SUB)).toBe(0);
  });

  it('treats any deserializer failure the same, and sends to the configured topic (provisioned with its subscription)', async () => {
    const admin = new FakeProvisioner(fake);
    const deserializer = {
      deserialize: () => {
        throw new Error('unknown schema version');
      },
    };
    await start({ admin, deserializer, tenant: 'acme', namespace: 'jobs', undecodable: { deadLetterTopic: 'poison', initialSubscription: 'ops', maxDeliveries: 1 } });
    fake.publish('persistent://acme/jobs/orders', { payload: '{}' });
    await until(() => fake.acks.length === 1);
    expect(fake.nacks).toHaveLength(0);
    expect(fake.sent.filter((m) => m.topic === 'persistent://acme/jobs/poison')).toHaveLength(1);
    expect(deadLetters[0]).toMatchObject({ deadLetterTopic: 'persistent://acme/jobs/poison', deliveries: 1, error: 'unknown schema version' });
    expect(admin.calls).toEqual(expect.arrayContaining(['topic persistent://acme/jobs/poison', 'subscription persistent://acme/jobs/poison ops Earliest']));
  });

  it('counts deliveries itself where the broker does not (Exclusive and Failover subscriptions, after a broker restart)', async () => {
    fake.redeliveryTracking = false;
    await start({ consumer: { subscriptionType: 'Exclusive' } });
    fake.publish(TOPIC, { payload: 'not json' });
    await until(() => fake.acks.length === 1);
    expect(fake.nacks.map((n) => n.message.redeliveryCount)).toEqual([0, 0]);
    expect(deadLetters.map((d) => d.deliveries)).toEqual([3]);
  });

  it('leaves the message to the broker when the dead letter cannot be published, and dead-letters it on a later delivery', async () => {
    fake.sendError = new Error('broker unavailable');
    await start({ undecodable: { maxDeliveries: 2 } });
    fake.consumers[0].options.negativeAckRedeliveryDelayMs = 30;
    fake.publish(TOPIC, { payload: 'not json' });
    await until(() => fake.nacks.length === 3);
    expect(fake.acks).toHaveLength(0);
    expect(String(errors[0])).toContain('broker unavailable');
    expect(deadLetters).toEqual([]);
    fake.sendError = null;
    await until(() => fake.acks.length === 1);
    expect(deadLetters.map((d) => d.deliveries)).toEqual([4]);
    expect(handler).not.toHaveBeenCalled();
  });

  it('logs the dead letter once, with at most 300 characters of the payload', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error');
    try {
      await start({ undecodable: { maxDeliveries: 2 } });
      fake.publish(TOPIC, { payload: `<html>${'x'.repeat(5_000)}</html>` });
      await until(() => fake.acks.length === 1);
      const lines = logged.mock.calls.map(([line]) => String(line));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/Dead-lettered message fake-1 on persistent:\/\/public\/default\/orders .* after 2 deliveries: cannot decode it: payload is not JSON/);
      expect(lines[0]).toContain('payload (5013 bytes): "<html>');
      expect(lines[0].match(/x/g)!.length).toBeLessThanOrEqual(300 + 20);
      const [dead] = fake.sent.filter((m) => m.topic === `${TOPIC}-${SUB}-DLQ`);
      expect(dead.properties![MESSAGE_PROPERTIES.error].length).toBeLessThanOrEqual(301);
    } finally {
      logged.mockRestore();
    }
  });

  it('refuses a maxDeliveries below 1 at listen', async () => {
    await expect(start({ undecodable: { maxDeliveries: 0 } })).rejects.toThrow(/maxDeliveries must be a positive integer/);
  });
});

describe('ServerPulsar start-up while the broker is unreachable', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  /** A provisioner whose first `failures` tenant calls fail as a broker that is down would. */
  function flakyAdmin(fake: FakePulsarClient, failures: number, status = 503) {
    const admin = new FakeProvisioner(fake);
    const ensureTenant = admin.ensureTenant.bind(admin);
    let left = failures;
    admin.ensureTenant = async (tenant: string) => {
      if (left-- > 0) throw new PulsarAdminError('PUT', `/admin/v2/tenants/${tenant}`, status, 'broker unavailable');
      return ensureTenant(tenant);
    };
    return admin;
  }

  it('retries within startupTimeoutMs, then consumes normally', async () => {
    const fake = new FakePulsarClient();
    const server = new ServerPulsar({ client: () => fake, admin: flakyAdmin(fake, 2), startupTimeoutMs: 10_000 });
    const seen: unknown[] = [];
    server.addHandler('orders', async (data: unknown) => void seen.push(data), true);
    await listen(server);
    await send(fake, { n: 1 });
    await until(() => seen.length === 1);
    expect(seen).toEqual([{ n: 1 }]);
    await server.close();
  });

  it('fails at once without a start-up budget, and at once on a refused (4xx) request', async () => {
    const fake = new FakePulsarClient();
    const noBudget = new ServerPulsar({ client: () => fake, admin: flakyAdmin(fake, 1) });
    noBudget.addHandler('orders', async () => undefined, true);
    await expect(listen(noBudget)).rejects.toThrow(/HTTP 503/);

    const refused = new ServerPulsar({ client: () => fake, admin: flakyAdmin(fake, 1, 403), startupTimeoutMs: 10_000 });
    refused.addHandler('orders', async () => undefined, true);
    const started = Date.now();
    await expect(listen(refused)).rejects.toThrow(/HTTP 403/);
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('stops retrying when closed during start-up', async () => {
    const fake = new FakePulsarClient();
    const server = new ServerPulsar({ client: () => fake, admin: flakyAdmin(fake, 1_000), startupTimeoutMs: 60_000 });
    server.addHandler('orders', async () => undefined, true);
    const listening = listen(server);
    await new Promise((r) => setTimeout(r, 100));
    await server.close();
    await expect(listening).rejects.toThrow();
  });
});

describe('ServerPulsar in a Nest microservice', () => {
  let app: INestMicroservice | undefined;

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('wires @EventPattern handlers, @Payload/@Ctx, acks, and nacks a throwing handler', async () => {
    const handled: Array<{ data: unknown; key?: string; redelivery: number }> = [];
    @Controller()
    class OrdersController {
      @EventPattern('orders')
      async onOrder(@Payload() data: { id: number; fail?: boolean }, @Ctx() ctx: PulsarContext) {
        handled.push({ data, key: ctx.getKey(), redelivery: ctx.getRedeliveryCount() });
        if (data.fail && ctx.getRedeliveryCount() === 0) {
          throw new Error('transient');
        }
      }
    }
    @Module({ controllers: [OrdersController] })
    class AppModule {}

    const fake = new FakePulsarClient();
    app = await NestFactory.createMicroservice(AppModule, {
      strategy: new ServerPulsar({ client: () => fake, admin: new FakeProvisioner(fake) }),
      logger: false,
    });
    await app.listen();
    send(fake, { id: 1 }, TOPIC, { key: 'a' });
    send(fake, { id: 2, fail: true });
    await until(() => fake.acks.length === 2);
    expect(fake.nacks).toHaveLength(1);
    expect(handled).toEqual(
      expect.arrayContaining([
        { data: { id: 1 }, key: 'a', redelivery: 0 },
        { data: { id: 2, fail: true }, key: undefined, redelivery: 0 },
        { data: { id: 2, fail: true }, key: undefined, redelivery: 1 },
      ]),
    );
    expect(handled).toHaveLength(3);
  });

  it('waits for every handler of a pattern registered twice', async () => {
    const gate = deferred();
    const done: string[] = [];
    @Controller()
    class A {
      @EventPattern('orders')
      async a() {
        await gate.promise;
        done.push('a');
      }
    }
    @Controller()
    class B {
      @EventPattern('orders')
      b() {
        return timer(5).pipe(map(() => done.push('b')));
      }
    }
    @Module({ controllers: [A, B] })
    class AppModule {}
    const fake = new FakePulsarClient();
    app = await NestFactory.createMicroservice(AppModule, {
      strategy: new ServerPulsar({ client: () => fake, admin: new FakeProvisioner(fake) }),
      logger: false,
    });
    await app.listen();
    send(fake, 1);
    await until(() => done.includes('b'));
    await new Promise((r) => setTimeout(r, 10));
    expect(fake.acks).toHaveLength(0);
    gate.resolve();
    await until(() => fake.acks.length === 1);
    expect(done.sort()).toEqual(['a', 'b']);
  });

  it('refuses to start with a @MessagePattern handler', async () => {
    @Controller()
    class Rpc {
      @MessagePattern('sum')
      sum(@Payload() xs: number[]) {
        return xs.reduce((a, b) => a + b, 0);
      }
    }
    @Module({ controllers: [Rpc] })
    class AppModule {}
    const fake = new FakePulsarClient();
    app = await NestFactory.createMicroservice(AppModule, {
      strategy: new ServerPulsar({ client: () => fake, admin: new FakeProvisioner(fake) }),
      logger: false,
    });
    await expect(app.listen()).rejects.toThrow(/"sum"/);
    expect(fake.consumers).toHaveLength(0);
  });
});
