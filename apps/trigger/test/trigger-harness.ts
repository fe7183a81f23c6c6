import { INestApplication, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FireRef, parseTaskPayload, SliceMessage, TaskMessage, TOPICS } from '@timer/contracts';
import { dataSourceOptions, runMigrations, TaskStatusValue } from '@timer/dal';
import { loadRoleConfig } from '@timer/platform';
import { Consumer, topicName, WsPulsarClient } from '@timer/pulsar';
import { ClientPulsar, createPulsarServer } from '@timer/pulsar-transport';
import { LOCK_RESOURCES, RedisLock, SliceIndex } from '@timer/redis';
import { deletePulsarNamespace, testEnv, uniqueId } from '@timer/testing';
import Redis from 'ioredis';
import { lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { TriggerConfig } from '../src/config/trigger.env';
import { sliceConsumers } from '../src/slices/slice-consumers';
import { TriggerMetrics } from '../src/slices/trigger.metrics';

/** A task message as the test's consumer of `timer-tasks` (or the catch-up lane) received it. */
export interface Received {
  task: TaskMessage;
  /** Fires in the message that carried it (`{tasks: [...]}` when more than one). */
  fires: number;
  key?: string;
  properties: Record<string, string>;
  receivedAt: number;
}

/**
 * The real trigger module (real MariaDB, Redis, Pulsar) as a hybrid Nest app with its `timer-slices`
 * consumer: a fresh migrated database `timer_test_<id>`, a Redis key prefix of its own (DB 1) and a
 * namespace of its own in the Pulsar test tenant. The test plays the scheduler (lock + slice message)
 * and consumes `timer-tasks` itself.
 */
export class TriggerHarness {
  app!: INestApplication;
  db!: DataSource;
  redis!: Redis;
  index!: SliceIndex;
  lock!: RedisLock;
  readonly received: Received[] = [];
  readonly id = uniqueId('trg');
  readonly prefix = `${this.id}:`;
  readonly namespace = this.id;
  private readonly database = `timer_test_${this.id}`;
  private readonly env = testEnv();
  private admin?: DataSource;
  private pulsar?: WsPulsarClient;
  private consumers: Consumer[] = [];
  private closed = false;

  constructor(private readonly triggerEnv: NodeJS.ProcessEnv = {}) {}

  async start(): Promise<this> {
    Logger.overrideLogger(['error', 'warn']);
    const base = new URL(this.env.mysqlUrl);
    const url = Object.assign(new URL(base.toString()), { pathname: `/${this.database}` }).toString();
    this.admin = new DataSource({ ...dataSourceOptions(base.toString(), 1), migrations: [], entities: [] });
    await this.admin.initialize();
    await this.admin.query(`CREATE DATABASE \`${this.database}\``);
    await runMigrations(url);
    const config = loadRoleConfig('trigger', {
      TIMER_MYSQL_URL: url,
      TIMER_MYSQL_POOL_SIZE: '4',
      TIMER_REDIS_URL: this.env.redisUrl,
      TIMER_REDIS_KEY_PREFIX: this.prefix,
      TIMER_PULSAR_URL: this.env.pulsarUrl,
      TIMER_PULSAR_TENANT: this.env.pulsarTenant,
      TIMER_PULSAR_NAMESPACE: this.namespace,
    });
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(config, this.triggerEnv)] }).compile();
    this.app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
    this.app.connectMicroservice({ strategy: createPulsarServer(config, sliceConsumers(this.app.get(TriggerConfig))) });
    await this.app.init(); // provisions the tenant and namespace
    await this.app.startAllMicroservices();
    this.db = this.app.get(DataSource);
    // A client of the test's own: the app's closes with the app.
    this.redis = new Redis(this.env.redisUrl, { maxRetriesPerRequest: 1 });
    this.index = new SliceIndex(this.redis, this.prefix, { defaultBuckets: 4 });
    this.lock = new RedisLock(this.redis, this.prefix);

    this.pulsar = new WsPulsarClient({ serviceUrl: this.env.pulsarUrl, connectTimeoutMs: 5_000 });
    // Both lanes: fires already late when walked (past minutes) go to the catch-up topic.
    for (const local of [TOPICS.tasks, TOPICS.catchUp]) this.consumers.push(await this.pulsar.subscribe({
      topic: this.topic(local),
      subscription: 'it-executor',
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      listener: (message, consumer) => {
        const parsed = parseTaskPayload(JSON.parse(message.payload.toString('utf8')));
        if (!parsed.ok) throw new Error(`the trigger published an invalid task message: ${parsed.reason}`);
        const receivedAt = Date.now();
        for (const task of parsed.value) {
          this.received.push({ task, fires: parsed.value.length, key: message.key, properties: message.properties, receivedAt });
        }
        void consumer.acknowledge(message).catch(() => undefined);
      },
    }));
    return this;
  }

  topic(local: string): string {
    return topicName(this.env.pulsarTenant, this.namespace, local);
  }

  /** Closes the trigger app (in-flight slices stop at their next step boundary and are nacked). */
  async closeApp(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.app.close();
  }

  async stop(): Promise<void> {
    const redis = this.redis;
    try {
      await Promise.all(this.consumers.map((c) => c.close().catch(() => undefined)));
      await this.pulsar?.close().catch(() => undefined);
      await this.closeApp();
      if (redis) {
        const keys = await redis.keys(`${this.prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      }
    } finally {
      await deletePulsarNamespace(this.env.pulsarUrl, `${this.env.pulsarTenant}/${this.namespace}`).catch(() => undefined);
      if (this.admin) {
        await this.admin.query(`DROP DATABASE IF EXISTS \`${this.database}\``);
        await this.admin.destroy();
      }
      Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']);
    }
  }

  /** Task rows (pending unless told otherwise). */
  async insertRows(fires: FireRef[], status: TaskStatusValue = 0): Promise<void> {
    for (const f of fires) {
      await this.db.query('INSERT INTO tasks (app, timer_id, run_at, status) VALUES (?, CAST(? AS UNSIGNED), ?, ?)', ['it', f.timerId, f.runAt, status]);
    }
  }

  /** Plays the scheduler: takes the slice lock and returns the message to publish. */
  async offer(minute: number, bucket: number, buckets = 4): Promise<SliceMessage> {
    const held = await this.lock.tryAcquire({ resource: LOCK_RESOURCES.slice(minute, bucket), ttlMs: 30_000 });
    if (!held) throw new Error(`slice ${minute}:${bucket} is locked`);
    return { minute, bucket, buckets, lockToken: held.token };
  }

  async publishSlice(slice: SliceMessage): Promise<void> {
    await lastValueFrom(this.app.get(ClientPulsar).emit(TOPICS.slices, slice));
  }

  /** Received task messages of one minute. */
  receivedIn(minute: number): Received[] {
    return this.received.filter((r) => r.task.runAt >= minute && r.task.runAt < minute + 60_000);
  }

  async sliceCount(outcome: string): Promise<number> {
    const m = await this.app.get(TriggerMetrics).slices.get();
    return m.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  }
}

export const fireIdOf = (f: FireRef): string => `${f.timerId}-${f.runAt}`;
