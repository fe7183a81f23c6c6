import { DataSource } from 'typeorm';
import { dataSourceOptions, MIGRATIONS, runMigrations } from '../src';
import { testEnv, uniqueId } from '@timer/testing';

describe('schema migrations against a real MariaDB', () => {
  // A fresh database per run, so the test sees a first migration and then a no-op.
  const db = `timer_test_${uniqueId()}`;
  const base = new URL(testEnv().mysqlUrl);
  const url = Object.assign(new URL(base.toString()), { pathname: `/${db}` }).toString();
  let admin: DataSource;

  beforeAll(async () => {
    admin = new DataSource({ ...dataSourceOptions(base.toString(), 1), migrations: [] });
    await admin.initialize();
    await admin.query(`CREATE DATABASE \`${db}\``);
  });
  afterAll(async () => {
    try {
      await admin.query(`DROP DATABASE IF EXISTS \`${db}\``);
    } finally {
      await admin.destroy();
    }
  });

  it('creates every table once and is idempotent on a second run', async () => {
    expect(await runMigrations(url)).toEqual(MIGRATIONS.map((m) => m.name));
    expect(await runMigrations(url)).toEqual([]);
    const tables = (await admin.query(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ?`, [db])) as { t: string }[];
    expect(tables.map((r) => r.t).sort()).toEqual(['app_tokens', 'apps', 'idempotency_keys', 'maintenance_windows', 'migrator_windows', 'schema_migrations', 'tasks', 'timer_versions', 'timers']);
  });

  it('enforces one fire per (timer_id, run_at) and reuse of a deleted timer name', async () => {
    await admin.query(`INSERT INTO \`${db}\`.tasks (app, timer_id, run_at) VALUES ('a', 1, 1000)`);
    await expect(admin.query(`INSERT INTO \`${db}\`.tasks (app, timer_id, run_at) VALUES ('a', 1, 1000)`)).rejects.toThrow(/Duplicate entry/);
    const insert = (live: string | null) =>
      admin.query(`INSERT INTO \`${db}\`.timers (app, name, live_name, cron, notify_http_param, status) VALUES ('a', 'n', ?, '* * * * *', '{}', 1)`, [live]);
    await insert('n');
    await expect(insert('n')).rejects.toThrow(/Duplicate entry/);
    await admin.query(`UPDATE \`${db}\`.timers SET live_name = NULL, deleted_at = 1 WHERE live_name = 'n'`);
    await expect(insert('n')).resolves.toBeDefined();
  });
});
