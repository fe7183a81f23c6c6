import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type Redis from 'ioredis';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '@timer/dal';
import { CLOCK, loadRoleConfig, NowClock } from '@timer/platform';
import { REDIS } from '@timer/redis';
import { testEnv, uniqueId } from '@timer/testing';
import { AppModule } from '../src/app.module';

/** A clock the test moves by hand; `fail` makes it throw (to provoke an internal error). */
export class FakeClock implements NowClock {
  fail: Error | undefined;
  constructor(public current: number) {}
  now(): number {
    if (this.fail) throw this.fail;
    return this.current;
  }
  set(iso: string | number): void {
    this.current = typeof iso === 'number' ? iso : Date.parse(iso);
  }
}

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

/** The prepared windows' length at the harness clock's start (default 60-minute windows, the current and two more). */
export const PREPARED_SECONDS = 3 * 3600;

/**
 * The real api module (real MariaDB, Redis and Pulsar) in Nest's testing module: a fresh migrated
 * database `timer_test_<id>`, a Redis key prefix of its own and the Pulsar test tenant; `CLOCK` is
 * replaced by a `FakeClock`.
 */
export class ApiHarness {
  app!: INestApplication;
  db!: DataSource;
  redis!: Redis;
  // Next year: the slice index expires keys by Redis's real clock, so fixed times must not lie in the past.
  readonly clock = new FakeClock(Date.UTC(new Date().getUTCFullYear() + 1, 5, 1, 10));
  readonly id = uniqueId('api');
  readonly prefix = `${this.id}:`;
  private readonly database = `timer_test_${this.id}`;
  private admin?: DataSource;

  constructor(private readonly apiEnv: NodeJS.ProcessEnv = {}) {}

  async start(): Promise<this> {
    const env = testEnv();
    const base = new URL(env.mysqlUrl);
    const url = Object.assign(new URL(base.toString()), { pathname: `/${this.database}` }).toString();
    this.admin = new DataSource({ ...dataSourceOptions(base.toString(), 1), migrations: [] });
    await this.admin.initialize();
    await this.admin.query(`CREATE DATABASE \`${this.database}\``);
    await runMigrations(url);
    const roleEnv = {
      TIMER_MYSQL_URL: url,
      TIMER_REDIS_URL: env.redisUrl,
      TIMER_REDIS_KEY_PREFIX: this.prefix,
      TIMER_PULSAR_URL: env.pulsarUrl,
      TIMER_PULSAR_TENANT: env.pulsarTenant,
    };
    const config = loadRoleConfig('api', roleEnv);
    // Writes go as far as the prepared windows at the clock's start (10:00: 3 hours), which most specs
    // inspect; the near-future cut itself has its own spec with the default.
    const apiEnv = { TIMER_ADMIN_TOKEN: ADMIN_TOKEN, TIMER_RATE_LIMIT_PER_SEC: '100000', TIMER_PRECREATE_SECONDS: String(PREPARED_SECONDS), ...this.apiEnv };
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(config, apiEnv)] })
      .overrideProvider(CLOCK)
      .useValue(this.clock)
      .compile();
    this.app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
    await this.app.init();
    this.db = this.app.get(DataSource);
    this.redis = this.app.get<Redis>(REDIS);
    return this;
  }

  async stop(): Promise<void> {
    try {
      if (this.redis) {
        const keys = await this.redis.keys(`${this.prefix}*`);
        if (keys.length > 0) await this.redis.del(...keys);
      }
      await this.app?.close();
    } finally {
      if (this.admin) {
        await this.admin.query(`DROP DATABASE IF EXISTS \`${this.database}\``);
        await this.admin.destroy();
      }
    }
  }

  http() {
    return request(this.app.getHttpServer());
  }

  /** A request with the admin token. */
  as(token: string | null = ADMIN_TOKEN) {
    const server = this.app.getHttpServer();
    const auth = (r: request.Test) => (token ? r.set('Authorization', `Bearer ${token}`) : r);
    return {
      get: (path: string) => auth(request(server).get(path)),
      post: (path: string, body?: unknown) => auth(request(server).post(path)).send(body as object),
      put: (path: string, body?: unknown) => auth(request(server).put(path)).send(body as object),
      patch: (path: string, body?: unknown) => auth(request(server).patch(path)).send(body as object),
      delete: (path: string, body?: unknown) => auth(request(server).delete(path)).send(body as object),
    };
  }

  async count(sql: string, params: unknown[] = []): Promise<number> {
    const rows = (await this.db.query(sql, params)) as { n: string | number }[];
    return Number(rows[0].n);
  }

  /** Every entry of every sorted set under this harness's prefix (the slice index): member and score. */
  async indexEntries(): Promise<{ member: string; score: number }[]> {
    const keys = await this.redis.keys(`${this.prefix}*`);
    const out: { member: string; score: number }[] = [];
    for (const key of keys) {
      if ((await this.redis.type(key)) !== 'zset') continue;
      const flat = await this.redis.zrange(key, 0, -1, 'WITHSCORES');
      for (let i = 0; i < flat.length; i += 2) out.push({ member: flat[i], score: Number(flat[i + 1]) });
    }
    return out.sort((a, b) => a.score - b.score || a.member.localeCompare(b.member));
  }
}
