import { DataSource } from 'typeorm';
import { testEnv, uniqueId } from '@timer/testing';
import { dataSourceOptions, runMigrations } from '../src';

/** A freshly migrated database `timer_test_<uniqueId>` for one test file; `drop()` removes it. */
export interface FreshDatabase {
  name: string;
  /** The database's URL (another DataSource on it, e.g. one connection for its session counters). */
  url: string;
  dataSource: DataSource;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<FreshDatabase> {
  const name = `timer_test_${uniqueId()}`;
  const base = new URL(testEnv().mysqlUrl);
  const url = Object.assign(new URL(base.toString()), { pathname: `/${name}` }).toString();
  const admin = new DataSource({ ...dataSourceOptions(base.toString(), 1), migrations: [], entities: [] });
  await admin.initialize();
  await admin.query(`CREATE DATABASE \`${name}\``);
  await runMigrations(url);
  const dataSource = new DataSource(dataSourceOptions(url, 4));
  await dataSource.initialize();
  return {
    name,
    url,
    dataSource,
    drop: async () => {
      try {
        await dataSource.destroy();
        await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await admin.destroy();
      }
    },
  };
}
