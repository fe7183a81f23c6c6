/** What bench:db and its variants share: the MariaDB CPU meter (see db.bench.ts for the method). */
import { execFileSync } from 'node:child_process';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '@timer/dal';
import { infra, procCpuSeconds, shortId, sleep } from '../../e2e/support';

/** Server counters reported per fire (SHOW GLOBAL STATUS). */
export const COUNTERS = ['Handler_read_key', 'Handler_read_next', 'Handler_read_rnd_next', 'Handler_write', 'Handler_update', 'Handler_delete', 'Innodb_buffer_pool_write_requests', 'Questions'];

export const log = (s: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);

export interface Measure {
  kind: string;
  fires: number;
  statements: number;
  wallMs: number;
  /** MariaDB CPU microseconds per fire, idle rate taken out. */
  usPerFire: number;
  /** The same before the idle rate is taken out. */
  rawUsPerFire: number;
  counters: Record<string, number>;
}

export function mariadbPid(): number {
  for (const name of ['mariadbd', 'mysqld']) {
    try {
      const pid = Number(execFileSync('pgrep', ['-o', '-x', name], { encoding: 'utf8' }).trim().split('\n')[0]);
      if (pid > 0) return pid;
    } catch {
      // not running under that name
    }
  }
  throw new Error('no mariadbd (or mysqld) process on this machine: the bench measures the local server');
}

/**
 * Runs `work` on a freshly migrated database `timer_test_bench_<tag>_<id>` of the local server and
 * drops it afterwards, whatever `work` throws.
 */
export async function withBenchDatabase<T>(tag: string, work: (db: DataSource, name: string) => Promise<T>): Promise<T> {
  const name = `timer_test_bench_${tag}_${shortId()}`.replace(/[^A-Za-z0-9_]/g, '_');
  const base = new URL(infra().mysqlUrl);
  const url = Object.assign(new URL(base.toString()), { pathname: `/${name}` }).toString();
  const admin = new DataSource({ ...dataSourceOptions(base.toString(), 1), migrations: [], entities: [] });
  await admin.initialize();
  await admin.query(`CREATE DATABASE \`${name}\``);
  let db: DataSource | undefined;
  try {
    await runMigrations(url);
    db = new DataSource(dataSourceOptions(url, 4));
    await db.initialize();
    return await work(db, name);
  } finally {
    await db?.destroy();
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.destroy();
  }
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export class Meter {
  private idlePerS = 0;
  constructor(
    private readonly pid: number,
    private readonly db: DataSource,
    private readonly names: readonly string[] = COUNTERS,
  ) {}

  private cpu(): number {
    const s = procCpuSeconds(this.pid);
    if (s === undefined) throw new Error('mariadbd is gone');
    return s;
  }

  private async counters(): Promise<Record<string, number>> {
    const rows = (await this.db.query(`SHOW GLOBAL STATUS WHERE Variable_name IN (${this.names.map(() => '?').join(', ')})`, [...this.names])) as { Variable_name: string; Value: string }[];
    return Object.fromEntries(rows.map((r) => [r.Variable_name, Number(r.Value)]));
  }

  /** The server's CPU rate while nobody asks it anything (its background threads). */
  async calibrate(): Promise<void> {
    await this.quiet(180_000);
    const c0 = this.cpu();
    const t0 = Date.now();
    await sleep(3000);
    this.idlePerS = (this.cpu() - c0) / ((Date.now() - t0) / 1000);
    log(`mariadbd idle: ${(this.idlePerS * 1000).toFixed(1)} ms of CPU per s`);
  }

  /**
   * Waits until the server is quiet (its InnoDB purge of earlier changes done): under 15 ms of CPU in
   * each of 3 consecutive 500 ms samples (purge comes in bursts), at most `maxMs`.
   */
  private async quiet(maxMs = 30_000): Promise<void> {
    const until = Date.now() + maxMs;
    let calm = 0;
    while (Date.now() < until && calm < 3) {
      const c0 = this.cpu();
      await sleep(500);
      calm = this.cpu() - c0 < 0.015 ? calm + 1 : 0;
    }
    if (calm < 3) log(`mariadbd did not become quiet within ${maxMs} ms: figures include other work`);
  }

  async measure(kind: string, fires: number, fn: () => Promise<number>): Promise<Measure> {
    await this.quiet();
    const k0 = await this.counters();
    const c0 = this.cpu();
    const t0 = Date.now();
    const statements = await fn();
    const wallMs = Date.now() - t0;
    await this.quiet();
    const elapsedS = (Date.now() - t0) / 1000;
    const rawS = this.cpu() - c0;
    const cpuS = rawS - this.idlePerS * elapsedS;
    const k1 = await this.counters();
    // The two SHOW STATUS and their Questions are the meter's own.
    const counters = Object.fromEntries(this.names.map((c) => [c, (k1[c] - k0[c] - (c === 'Questions' ? 1 : 0)) / fires]));
    return { kind, fires, statements, wallMs, usPerFire: (cpuS * 1e6) / fires, rawUsPerFire: (rawS * 1e6) / fires, counters };
  }
}

