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
    expect(tables.map((r) => r.t).sort()).toEqual(['app_tokens', 'apps', 'calendars', 'idempotency_keys', 'maintenance_windows', 'migrator_windows', 'schema_migrations', 'tasks', 'timer_versions', 'timers']);
  });

  it('reverts the outcome indexes (down) to the status indexes and applies them again, with a fire in the table', async () => {
    const indexes = async () =>
      ((await admin.query(`SELECT DISTINCT index_name AS i FROM information_schema.statistics WHERE table_schema = ? AND table_name = 'tasks' ORDER BY index_name`, [db])) as { i: string }[]).map((r) => r.i);
    const outcomes = async () => ((await admin.query(`SELECT status, outcome FROM \`${db}\`.tasks ORDER BY status`)) as { status: number; outcome: number }[]).map((r) => [r.status, r.outcome]);
    await admin.query(`INSERT INTO \`${db}\`.tasks (app, timer_id, run_at, status) VALUES ('m', 1, 1, 0), ('m', 2, 1, 1), ('m', 3, 1, 2), ('m', 4, 1, 3), ('m', 5, 1, 4)`);
    expect(await outcomes()).toEqual([[0, 0], [1, 0], [2, 2], [3, 3], [4, 4]]);
    const ds = new DataSource(dataSourceOptions(url, 1));
    await ds.initialize();
    try {
      // The calendars, the result webhook, the apps' secret columns, the status index's drop and started_at (the last
      // migrations) first, then the outcome indexes.
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
    } finally {
      await ds.destroy();
    }
    expect(await indexes()).toEqual(['idx_app_dead_letter', 'idx_app_run_at', 'idx_run_at_status_timer', 'idx_status_run_at', 'PRIMARY', 'uk_timer_run_at']);
    expect(await runMigrations(url)).toEqual(['TaskOutcomeIndexes1765040000000', 'TaskStartedAt1765050000000', 'DropTaskStatusIndex1765070000000', 'AppSecretRotation1765090000000', 'TimerResultWebhook1765100000000', 'Calendars1765110000000']);
    expect(await indexes()).toEqual(['idx_app_dead_letter', 'idx_app_run_at_outcome', 'idx_outcome_run_at', 'PRIMARY', 'uk_timer_run_at']);
    expect(await outcomes()).toEqual([[0, 0], [1, 0], [2, 2], [3, 3], [4, 4]]);
    await admin.query(`DELETE FROM \`${db}\`.tasks WHERE app = 'm'`);
  });

  it('reverts started_at (down) into the attempts JSON a first success would have appended, and adds it again', async () => {
    const attempts = async () =>
      ((await admin.query(`SELECT timer_id, attempts FROM \`${db}\`.tasks WHERE app = 's' ORDER BY timer_id`)) as { timer_id: number; attempts: unknown }[]).map((r) => [
        Number(r.timer_id),
        typeof r.attempts === 'string' ? JSON.parse(r.attempts) : r.attempts,
      ]);
    const kept = [{ attempt: 1, startedAt: 5, httpStatus: 500, costMs: 2, error: 'HTTP 500' }];
    await admin.query(
      `INSERT INTO \`${db}\`.tasks (app, timer_id, run_at, status, attempt, http_status, cost_ms, error, started_at, attempts)
       VALUES ('s', 1, 1, 2, 1, 200, 7, NULL, 1007, NULL), ('s', 2, 1, 3, 1, 500, 2, 'HTTP 500', 0, ?), ('s', 3, 1, 0, 0, NULL, NULL, NULL, 0, NULL)`,
      [JSON.stringify(kept)],
    );
    const ds = new DataSource(dataSourceOptions(url, 1));
    await ds.initialize();
    try {
      // The calendars, the result webhook, the apps' secret columns and the status index's drop (the last migrations) first.
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
      await ds.undoLastMigration({ transaction: 'each' });
    } finally {
      await ds.destroy();
    }
    expect(await attempts()).toEqual([[1, [{ attempt: 1, startedAt: 1007, httpStatus: 200, costMs: 7, error: null }]], [2, kept], [3, null]]);
    const columns = async () => ((await admin.query(`SELECT column_name AS c FROM information_schema.columns WHERE table_schema = ? AND table_name = 'tasks' AND column_name = 'started_at'`, [db])) as unknown[]).length;
    expect(await columns()).toBe(0);
    expect(await runMigrations(url)).toEqual(['TaskStartedAt1765050000000', 'DropTaskStatusIndex1765070000000', 'AppSecretRotation1765090000000', 'TimerResultWebhook1765100000000', 'Calendars1765110000000']);
    expect(await columns()).toBe(1);
    await admin.query(`DELETE FROM \`${db}\`.tasks WHERE app = 's'`);
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
