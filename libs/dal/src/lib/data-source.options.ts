import { readFileSync } from 'fs';
import { isIP } from 'net';
import { MysqlUrl, mysqlTlsPolicy, parseMysqlUrl } from '@timer/platform';
import { DataSourceOptions } from 'typeorm';
import { TypeOrmLogger } from './typeorm-logger';
import { AppTokenEntity } from './entities/app-token.entity';
import { AppEntity } from './entities/app.entity';
import { TaskEntity } from './entities/task.entity';
import { TimerVersionEntity } from './entities/timer-version.entity';
import { TimerEntity } from './entities/timer.entity';
import { InitialSchema1763800000000 } from './migrations/1763800000000-initial-schema';
import { ReadPathIndexes1763900000000 } from './migrations/1763900000000-read-path-indexes';
import { LedgerIndexes1764000000000 } from './migrations/1764000000000-ledger-indexes';
import { TimerVersionsIdempotencyKeys1764100000000 } from './migrations/1764100000000-timer-versions-idempotency-keys';
import { TimerBoundsIntervals1764200000000 } from './migrations/1764200000000-timer-bounds-intervals';
import { TaskAttempts1764300000000 } from './migrations/1764300000000-task-attempts';
import { AppPause1764400000000 } from './migrations/1764400000000-app-pause';
import { FirePolicies1764510000000 } from './migrations/1764510000000-fire-policies';
import { TaskBackfill1764540000000 } from './migrations/1764540000000-task-backfill';
import { DstPolicies1764520000000 } from './migrations/1764520000000-dst-policies';
import { AppQuotas1764530000000 } from './migrations/1764530000000-app-quotas';
import { MaintenanceWindows1764560000000 } from './migrations/1764560000000-maintenance-windows';
import { TimerFailureWebhook1764570000000 } from './migrations/1764570000000-timer-failure-webhook';
import { TimerResultWebhook1765100000000 } from './migrations/1765100000000-timer-result-webhook';
import { DeadLettersFailureWebhook1764900000000 } from './migrations/1764900000000-dead-letters-failure-webhook';
import { TimerAutoSpread1765000000000 } from './migrations/1765000000000-timer-auto-spread';
import { TimerNextFire1765010000000 } from './migrations/1765010000000-timer-next-fire';
import { AppLiveTimers1765020000000 } from './migrations/1765020000000-app-live-timers';
import { DropTaskCreatedAtIndex1765030000000 } from './migrations/1765030000000-drop-task-created-at-index';
import { TaskOutcomeIndexes1765040000000 } from './migrations/1765040000000-task-outcome-indexes';
import { TaskStartedAt1765050000000 } from './migrations/1765050000000-task-started-at';
import { DropTaskStatusIndex1765070000000 } from './migrations/1765070000000-drop-task-status-index';
import { AppSecretRotation1765090000000 } from './migrations/1765090000000-app-secret-rotation';
import { Calendars1765110000000 } from './migrations/1765110000000-calendars';

/** Every migration, in order. Schema changes only ever come through here (never `synchronize`). */
export const MIGRATIONS = [InitialSchema1763800000000, ReadPathIndexes1763900000000, LedgerIndexes1764000000000, TimerVersionsIdempotencyKeys1764100000000, TimerBoundsIntervals1764200000000, TaskAttempts1764300000000, AppPause1764400000000, FirePolicies1764510000000, DstPolicies1764520000000, AppQuotas1764530000000, TaskBackfill1764540000000, MaintenanceWindows1764560000000, TimerFailureWebhook1764570000000, DeadLettersFailureWebhook1764900000000, TimerAutoSpread1765000000000, TimerNextFire1765010000000, AppLiveTimers1765020000000, DropTaskCreatedAtIndex1765030000000, TaskOutcomeIndexes1765040000000, TaskStartedAt1765050000000, DropTaskStatusIndex1765070000000, AppSecretRotation1765090000000, TimerResultWebhook1765100000000, Calendars1765110000000];

/** Every entity (mapped onto the tables the migrations create). */
export const ENTITIES = [AppEntity, AppTokenEntity, TimerEntity, TaskEntity, TimerVersionEntity];

/** Connection settings beyond the URL (`TIMER_MYSQL_*`). */
export interface MysqlConnectionOptions {
  /** PEM file of the CA that signed the server's certificate (`TIMER_MYSQL_TLS_CA_FILE`). */
  tlsCaFile?: string;
  /** Log statements slower than this (ms); 0 or unset: off (`TIMER_MYSQL_SLOW_QUERY_MS`). */
  slowQueryMs?: number;
}

/** The part of mysql2's `ssl` option the service sets. */
export interface MysqlSsl {
  ca?: string;
  rejectUnauthorized: true;
  verifyIdentity: boolean;
}

/**
 * mysql2's `ssl` option from the URL's `ssl-mode` and the CA file: the chain is always verified
 * (against the CA file, else Node's public CAs); the host name too, except with `VERIFY_CA` and for
 * a host given as an IP address: mysql2 sends no server name then, and Node would match the
 * certificate against "localhost" instead of the address.
 */
export function mysqlSslOptions(url: Pick<MysqlUrl, 'host' | 'sslMode'>, tlsCaFile?: string): MysqlSsl | undefined {
  const policy = mysqlTlsPolicy(url.sslMode, !!tlsCaFile);
  if (!policy.enabled) return undefined;
  return {
    ...(tlsCaFile ? { ca: readFileSync(tlsCaFile, 'utf8') } : {}),
    rejectUnauthorized: true,
    verifyIdentity: policy.verifyIdentity && isIP(url.host) === 0,
  };
}

/**
 * TypeORM options for MySQL/MariaDB through mysql2. Times are UTC epoch milliseconds in BIGINT
 * columns, so the session time zone only matters for the bookkeeping DATETIME(3) columns: force UTC.
 * The URL is parsed here (TypeORM's own parser drops the query, so `ssl-mode` would be lost), and
 * TypeORM logs through the role's logger, without parameters.
 */
export function dataSourceOptions(url: string, poolSize = 20, connection: MysqlConnectionOptions = {}): DataSourceOptions {
  const u = parseMysqlUrl(url);
  return {
    type: 'mysql',
    host: u.host,
    port: u.port,
    username: u.username,
    password: u.password,
    database: u.database,
    ssl: mysqlSslOptions(u, connection.tlsCaFile),
    timezone: 'Z',
    charset: 'utf8mb4_bin',
    supportBigNumbers: true,
    bigNumberStrings: false,
    poolSize,
    synchronize: false,
    migrationsRun: false,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    entities: ENTITIES,
    logging: ['error', 'warn', 'migration', 'schema'],
    logger: new TypeOrmLogger(),
    ...(connection.slowQueryMs ? { maxQueryExecutionTime: connection.slowQueryMs } : {}),
  };
}
