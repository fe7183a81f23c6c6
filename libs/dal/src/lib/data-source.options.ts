import { DataSourceOptions } from 'typeorm';
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

/** Every migration, in order. Schema changes only ever come through here (never `synchronize`). */
export const MIGRATIONS = [InitialSchema1763800000000, ReadPathIndexes1763900000000, LedgerIndexes1764000000000, TimerVersionsIdempotencyKeys1764100000000, TimerBoundsIntervals1764200000000];

/** Every entity (mapped onto the tables the migrations create). */
export const ENTITIES = [AppEntity, AppTokenEntity, TimerEntity, TaskEntity, TimerVersionEntity];

/**
 * TypeORM options for MySQL/MariaDB through mysql2. Times are UTC epoch milliseconds in BIGINT
 * columns, so the session time zone only matters for the bookkeeping DATETIME(3) columns: force UTC.
 */
export function dataSourceOptions(url: string, poolSize = 20): DataSourceOptions {
  return {
    type: 'mysql',
    url,
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
    logging: ['error', 'migration'],
  };
}
