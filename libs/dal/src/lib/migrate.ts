import { DataSource } from 'typeorm';
import { dataSourceOptions, MysqlConnectionOptions } from './data-source.options';

/** Applies pending migrations; idempotent. Returns the names of the migrations it ran. */
export async function runMigrations(url: string, connection: MysqlConnectionOptions = {}): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions(url, 2, connection));
  await ds.initialize();
  try {
    const ran = await ds.runMigrations({ transaction: 'each' });
    return ran.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
