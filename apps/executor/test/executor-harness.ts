import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createServer, IncomingHttpHeaders, Server } from 'http';
import type { AddressInfo } from 'net';
import type Redis from 'ioredis';
import { lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { TaskMessage, TOPICS } from '@timer/contracts';
import { dataSourceOptions, runMigrations, TaskEntity, TaskRepository, TimerRepository, TimerStatus, NewTimer, TimerEntity } from '@timer/dal';
import { loadRoleConfig, MetricsService } from '@timer/platform';
import { PeekedMessage, PulsarAdmin, topicName } from '@timer/pulsar';
import { ClientPulsar } from '@timer/pulsar-transport';
import { taskMessage, taskRecord } from '@timer/fire';
import { REDIS } from '@timer/redis';
import { deletePulsarNamespace, testEnv, uniqueId } from '@timer/testing';
import { AppModule } from '../src/app.module';
import { ExecutorConfig } from '../src/config/executor.env';
import { createExecutorServer } from '../src/executor.transport';
import { ExecutorMetrics } from '../src/shared/executor.metrics';

export interface ReceivedCall {
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A local HTTP receiver on 127.0.0.1: records every request; `respond(path)` says what to answer
 * (default 200 "ok"); `hold(path)` keeps requests open until `release()`.
 */
export class Receiver {
  readonly calls: ReceivedCall[] = [];
  private server!: Server;
  private readonly statuses = new Map<string, number>();

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        this.calls.push({ at: Date.now(), method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const status = this.statuses.get(path) ?? 200;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status < 300 ? 'ok' : 'failing on purpose');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  respond(path: string, status: number): void {
    this.statuses.set(path, status);
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  callsTo(path: string): ReceivedCall[] {
    return this.calls.filter((c) => c.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The real executor module (real MariaDB, Redis and Pulsar) with its Pulsar server: a fresh migrated
 * database `timer_test_<id>`, a Redis key prefix of its own, and its own namespace in the Pulsar test
 * tenant (so parallel files never take each other's messages).
 */
export class ExecutorHarness {
  app!: INestApplication;
  db!: DataSource;
  redis!: Redis;
  client!: ClientPulsar;
  admin!: PulsarAdmin;
  readonly id = uniqueId('ex');
  readonly prefix = `${this.id}:`;
  readonly namespace = this.id;
  private readonly database = `timer_test_${this.id}`;
  private rootDs?: DataSource;
  private readonly env = testEnv();

  constructor(private readonly executorEnv: NodeJS.ProcessEnv = {}) {}

  async start(): Promise<this> {
    const base = new URL(this.env.mysqlUrl);
    const url = Object.assign(new URL(base.toString()), { pathname: `/${this.database}` }).toString();
    this.rootDs = new DataSource({ ...dataSourceOptions(base.toString(), 1), migrations: [] });
    await this.rootDs.initialize();
    await this.rootDs.query(`CREATE DATABASE \`${this.database}\``);
    await runMigrations(url);
    const config = loadRoleConfig('executor', {
      TIMER_MYSQL_URL: url,
      TIMER_MYSQL_POOL_SIZE: '8',
      TIMER_REDIS_URL: this.env.redisUrl,
      TIMER_REDIS_KEY_PREFIX: this.prefix,
      TIMER_PULSAR_URL: this.env.pulsarUrl,
      TIMER_PULSAR_TENANT: this.env.pulsarTenant,
      TIMER_PULSAR_NAMESPACE: this.namespace,
      TIMER_SHUTDOWN_TIMEOUT_MS: '15000',
    });
    this.admin = new PulsarAdmin({ serviceUrl: this.env.pulsarUrl });
    await this.admin.ensureTenant(this.env.pulsarTenant);
    await this.admin.ensureNamespace(`${this.env.pulsarTenant}/${this.namespace}`);
    // Created before anything is dead-lettered, at the earliest position, so the test can peek.
    await this.admin.ensureTopic(this.topic(TOPICS.deadLetter));
    await this.admin.ensureSubscription(this.topic(TOPICS.deadLetter), 'it-dlq', 'Earliest');

    const moduleRef = await Test.createTestingModule({
      imports: [AppModule.register(config, { TIMER_CALLBACK_ALLOW_PRIVATE: 'true', TIMER_EXECUTOR_CONCURRENCY: '16', ...this.executorEnv })],
    }).compile();
    this.app = moduleRef.createNestApplication({ logger: process.env.EXECUTOR_IT_DEBUG ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn'] });
    this.app.connectMicroservice({ strategy: createExecutorServer(config, this.app.get(ExecutorConfig)) }, { inheritAppConfig: true });
    await this.app.startAllMicroservices();
    await this.app.init();
    this.db = this.app.get(DataSource);
    this.redis = this.app.get<Redis>(REDIS);
    this.client = this.app.get(ClientPulsar);
    return this;
  }

  /** Stops like the role's SIGTERM drain: the transport first (in-flight messages finish, then Nest's hooks run). */
  async stop(): Promise<void> {
    try {
      if (this.redis) {
        const keys = await this.redis.keys(`${this.prefix}*`).catch(() => [] as string[]);
        if (keys.length > 0) await this.redis.del(...keys).catch(() => undefined);
      }
      if (this.app) {
        await Promise.all(this.app.getMicroservices().map((m) => m.close()));
        await this.app.close();
      }
    } finally {
      if (this.rootDs) {
        await this.rootDs.query(`DROP DATABASE IF EXISTS \`${this.database}\``);
        await this.rootDs.destroy();
      }
      await deletePulsarNamespace(this.env.pulsarUrl, `${this.env.pulsarTenant}/${this.namespace}`).catch(() => undefined);
    }
  }

  /** The fire's row read over a connection of the test's own (works after the executor closed its pool). */
  async taskOutside(timerId: string, runAt: number): Promise<{ status: number; attempt: number } | undefined> {
    const rows = (await this.rootDs!.query(`SELECT status, attempt FROM \`${this.database}\`.tasks WHERE timer_id = ? AND run_at = ?`, [timerId, runAt])) as {
      status: number;
      attempt: number;
    }[];
    return rows[0] ? { status: Number(rows[0].status), attempt: Number(rows[0].attempt) } : undefined;
  }

  topic(local: string): string {
    return topicName(this.env.pulsarTenant, this.namespace, local);
  }

  get metrics(): ExecutorMetrics {
    return this.app.get(ExecutorMetrics);
  }

  async timer(t: Partial<NewTimer> & { url: string }): Promise<TimerEntity> {
    const { url, ...rest } = t;
    return this.app.get(TimerRepository).create({
      app: 'app-it',
      name: uniqueId('timer'),
      cron: '* * * * * *',
      notifyHttpParam: { url, method: 'POST', header: { 'X-Custom': ['a'] }, body: '{"hello":"world"}' },
      status: TimerStatus.Enabled,
      ...rest,
    });
  }

  /** A task row, as the migrator or api creates it before any message. */
  async row(timerId: string, runAt: number): Promise<void> {
    await this.app.get(TaskRepository).insertIgnore([{ app: 'app-it', timerId, runAt }]);
  }

  async task(timerId: string, runAt: number): Promise<TaskEntity | null> {
    return this.app.get(TaskRepository).find(timerId, runAt);
  }

  /** Publishes a task message as the trigger does. */
  async publish(timerId: string, runAt: number, attempt = 1): Promise<TaskMessage> {
    const message = taskMessage({ timerId, runAt }, { attempt });
    await lastValueFrom(this.client.emit(TOPICS.tasks, taskRecord(message)));
    return message;
  }

  async deadLetters(): Promise<PeekedMessage[]> {
    return this.admin.peekMessages(this.topic(TOPICS.deadLetter), 'it-dlq', 20);
  }
}

/** The sum of a metric's samples (with these labels) as /metrics renders them. */
export async function metricValue(h: ExecutorHarness, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await h.app.get(MetricsService).render();
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const lbl = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => lbl.includes(`${k}="${v}"`))) total += Number(m[3]);
  }
  return total;
}

/** A harness and a receiver for one describe block: started before its tests, stopped after them. */
export function harnessWithReceiver(env: NodeJS.ProcessEnv = {}): { h: ExecutorHarness; receiver: Receiver } {
  const h = new ExecutorHarness(env);
  const receiver = new Receiver();
  beforeAll(async () => {
    await receiver.start();
    await h.start();
  });
  afterAll(async () => {
    await h.stop();
    await receiver.stop();
  });
  return { h, receiver };
}
