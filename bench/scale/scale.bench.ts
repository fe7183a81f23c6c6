/**
 * Scale benchmark (a command, not a test): what the migrator's windows cost with many timers.
 *
 *   npm run bench:scale -- [--timers 100000] [--windows 3] [--mix 1] [--sparse 1] [--api-seconds 0] [--api-concurrency 16] [--api-processes 1] [--api-batch 1] [--api-apps 1]
 *
 * On a fresh database (the Stack's, no roles started) it bulk-inserts --timers enabled timers with a
 * realistic mix (MIX below: every-minute, 5-minute, hourly and daily crons in 20 time zones, a share
 * of one-shots over the next day; the hourly ones and a share of the daily ones at the top of the
 * hour), then expands --windows consecutive 60-minute windows with the migrator's own MigratorService
 * (this process is the migrator; real MariaDB and Redis), each with the clock two windows before the
 * window's start, as in production (windows are prepared two ahead). Per window: wall time, migrator
 * CPU s (this process), MariaDB and Redis CPU s (/proc of the servers), timers read, fires created.
 * Then the storage: rows and bytes (data + index, information_schema after ANALYZE) per timer and
 * per fire in MySQL, Redis used_memory per indexed fire.
 *
 * --sparse 1 (default) then measures the issue's proportionality target on a second fresh database:
 * --timers timers of which 99 % fire once a day at 03:00 UTC and 1 % every hour; it expands the
 * 03:00 window (every timer fires) and the two after it (1 % fire) and prints their ratio.
 *
 * --api-seconds N > 0 starts the api role (needs `npm run build`) and creates + enables typical
 * timers (hourly and daily crons) for N seconds from --api-concurrency concurrent loops, all in one app
 * (the app of the mix), and reports the CPU ms per timer of the api process, of MariaDB and Redis
 * (the whole servers) and of this process (the client) over the phase. The client is undici's pooled
 * `request`, not `fetch` (same requests and checks; fetch cost ~2 ms of CPU per timer on the cores
 * the api and MariaDB share). Each loop creates then enables one timer and waits for both answers
 * (no Idempotency-Key: a client that sends one adds its reservation to the create).
 * --api-batch N > 1: each loop sends POST def/batch with N typical timers and `enable: true` instead
 * (one request, one transaction for N timers); the latency reported is the request's, which is each of
 * its timers' (a timer is created and enabled when its batch answers); per-timer figures divide by timers.
 * --api-apps K > 1 spreads the loops over K apps (loop k creates in app k mod K), as a service with
 * many client apps sees them: each app's creates and enables serialise on its row lock (quotas), other
 * apps' do not wait for it. The default, one app, is the worst case of that lock.
 * --api-processes N starts N api processes (replicas, each on its own port, as the chart scales
 * them) and spreads the loops over them; the api CPU is their sum.
 *
 * It also reports MariaDB statements (global `Questions`) and row-lock waits per timer: run it alone.
 *
 * --mix 0 skips the mix phase (with --sparse 0 only the API phase runs: for iterating on it; the
 * full run's figures are the same).
 *
 * The delivery of the mix's top-of-hour burst is the pipeline bench's `--shape spike` (no roles run here).
 *
 * Writes .local/results/scale-<time>.json and .md and prints the tables. A progress line every 5 s.
 */
import { execFileSync } from 'node:child_process';
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { Pool } from 'undici';
import { dataSourceOptions, MigratorWindowRepository, NewTask, TaskRepository, TimerRepository } from '@timer/dal';
import { FireClaims, RedisLock, SliceIndex } from '@timer/redis';
import { FireRegenerator, FireRows, FireWriter } from '@timer/fire';
import { markdownTable, numericFlags, percentiles, procCpuSeconds, shortId, Stack, writeResults } from '../../e2e/support';
import { MigratorConfig, MigratorEnv } from '../../apps/migrator/src/config/migrator.env';
import { MigratorMetrics } from '../../apps/migrator/src/migration/migrator.metrics';
import { MigratorService, WindowOutcome } from '../../apps/migrator/src/migration/migrator.service';

const H = 3_600_000;
const APP = 'scale';
const INSERT_BATCH = 2_000;
const DEFAULTS = { timers: 100_000, windows: 3, mix: 1, sparse: 1, apiSeconds: 0, apiConcurrency: 16, apiProcesses: 1, apiBatch: 1, apiApps: 1 };
type Args = typeof DEFAULTS;

const ZONES = [
  'UTC', 'Europe/London', 'Europe/Berlin', 'Europe/Moscow', 'Asia/Dubai', 'Asia/Kolkata', 'Asia/Shanghai', 'Asia/Tokyo', 'Australia/Sydney', 'Pacific/Auckland',
  'America/Sao_Paulo', 'America/New_York', 'America/Chicago', 'America/Denver', 'America/Los_Angeles', 'America/Anchorage', 'Pacific/Honolulu', 'Africa/Cairo', 'Asia/Kathmandu', 'America/St_Johns',
];

/** Shares of the mix, in percent of the timers (by i mod 100). */
const MIX = { everyMinute: 1, fiveMinutes: 2, hourly: 12, daily: 75, oneShot: 10 };

const log = (s: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const round = (x: number, d = 1) => Number(x.toFixed(d));

/** Timer i of the realistic mix: [cron, runAt, zone]. */
function mixTimer(i: number, w0: number): [string | null, number | null, string] {
  const k = i % 100;
  const zone = ZONES[i % ZONES.length];
  if (k < MIX.everyMinute) return ['0 * * * * *', null, zone];
  if (k < MIX.everyMinute + MIX.fiveMinutes) return ['0 */5 * * * *', null, zone];
  // The hourly ones all at the top of the hour: the burst.
  if (k < MIX.everyMinute + MIX.fiveMinutes + MIX.hourly) return ['0 0 * * * *', null, zone];
  if (k < 100 - MIX.oneShot) {
    // A third of the daily ones at a full hour, the rest at any minute; hours spread over the day.
    const minute = i % 3 === 0 ? 0 : (i * 7) % 60;
    return [`0 ${minute} ${(i * 5) % 24} * * *`, null, zone];
  }
  // One-shots over the day after the first window, on whole seconds.
  return [null, w0 + Math.floor(((i * 7919) % 86_400) * 1000), zone];
}

/** 99 % daily at 03:00 UTC, 1 % hourly: the proportionality check. */
function sparseTimer(i: number): [string | null, number | null, string] {
  return [i % 100 === 0 ? '0 0 * * * *' : '0 0 3 * * *', null, 'UTC'];
}

/** Bulk-inserts enabled timers whose fires before `nextFireAt` exist (none: it is the first window's start). */
async function insertTimers(s: Stack, n: number, make: (i: number) => [string | null, number | null, string], nextFireAt: number, label: string): Promise<number> {
  const t0 = Date.now();
  await s.sql('INSERT IGNORE INTO apps (app) VALUES (?)', [APP]);
  const hook = JSON.stringify({ url: 'http://127.0.0.1:9/scale', method: 'POST' });
  let lastLog = Date.now();
  for (let i = 0; i < n; i += INSERT_BATCH) {
    const rows = [];
    for (let k = i; k < Math.min(n, i + INSERT_BATCH); k++) {
      const [cron, runAt, zone] = make(k);
      rows.push([APP, `s${k}`, `s${k}`, cron, runAt, zone, hook, 2, cron === null ? runAt : null, nextFireAt]);
    }
    await s.sql('INSERT INTO timers (app, name, live_name, cron, run_at, time_zone, notify_http_param, status, final_at, next_fire_at) VALUES ?', [rows]);
    if (Date.now() - lastLog > 5000) {
      lastLog = Date.now();
      log(`${label}: inserted ${i + rows.length} of ${n} timers (${Math.round((i + rows.length) / ((Date.now() - t0) / 1000))}/s)`);
    }
  }
  return Date.now() - t0;
}

/** PIDs of the local MariaDB and Redis servers (CPU accounting), by exact process name. */
function serverPid(...names: string[]): number | undefined {
  for (const name of names) {
    try {
      const pid = Number(execFileSync('pgrep', ['-o', '-x', name], { encoding: 'utf8' }).trim().split('\n')[0]);
      if (pid > 0) return pid;
    } catch {
      // not running under that name
    }
  }
  return undefined;
}

interface CpuSample {
  migrator: number;
  mariadb: number;
  redis: number;
}

function cpuNow(pids: { mariadb?: number; redis?: number }): CpuSample {
  const own = process.cpuUsage();
  return { migrator: (own.user + own.system) / 1e6, mariadb: procCpuSeconds(pids.mariadb) ?? NaN, redis: procCpuSeconds(pids.redis) ?? NaN };
}

async function redisUsedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

interface WindowRow {
  window: string;
  status: string;
  timersRead: number;
  fires: number;
  inserted: number;
  wallS: number;
  migratorCpuS: number;
  mariadbCpuS: number;
  redisCpuS: number;
  firesPerS: number;
  /** Expansion CPU (migrator + MariaDB + Redis) over the window's length: share of one core. */
  coreShare: number;
}

/** A migrator over the stack's database and keys, with a clock the caller moves; counts rows written for the progress line. */
async function migratorOn(s: Stack): Promise<{ service: MigratorService; clock: { at: number }; written: { rows: number }; close: () => Promise<void> }> {
  const db = new DataSource(dataSourceOptions(s.mysqlUrl, 6));
  await db.initialize();
  const redis = new Redis(s.redisUrl, { maxRetriesPerRequest: 1 });
  const clock = { at: 0 };
  const now = { now: () => clock.at };
  const written = { rows: 0 };
  const tasks = new TaskRepository(db);
  const counting: FireRows = {
    insertIgnore: (rows: NewTask[], m) => {
      written.rows += rows.length;
      return tasks.insertIgnore(rows, m);
    },
  };
  const index = new SliceIndex(redis, s.keyPrefix);
  const due = { publish: async () => undefined, publishBatch: async () => undefined }; // the clock is two windows ahead: nothing is due
  const writer = new FireWriter(counting, index, due, now);
  const config = new MigratorConfig(Object.assign(new MigratorEnv(), { TIMER_WINDOW_MINUTES: 60 }));
  const regenerator = new FireRegenerator(tasks, writer, index, new TimerRepository(db), db, new FireClaims(redis, s.keyPrefix));
  const service = new MigratorService(new MigratorWindowRepository(db), new TimerRepository(db), writer, new RedisLock(redis, s.keyPrefix), now, config, new MigratorMetrics(new Registry()), regenerator, index);
  return {
    service,
    clock,
    written,
    close: async () => {
      redis.disconnect();
      await db.destroy();
    },
  };
}

/** Expands `count` windows from `w0`, each with the clock two windows before its start. */
async function expandWindows(s: Stack, w0: number, count: number, label: string): Promise<WindowRow[]> {
  const m = await migratorOn(s);
  const pids = { mariadb: serverPid('mariadbd', 'mysqld'), redis: serverPid('redis-server') };
  const rows: WindowRow[] = [];
  try {
    for (let k = 0; k < count; k++) {
      const window = { start: w0 + k * H, end: w0 + (k + 1) * H };
      m.clock.at = window.start - 2 * H;
      const before = cpuNow(pids);
      const rows0 = m.written.rows;
      const t0 = Date.now();
      const progress = setInterval(() => {
        const n = m.written.rows - rows0;
        log(`${label} window ${k + 1}/${count}: ${n} fires written in ${round((Date.now() - t0) / 1000)} s (${Math.round(n / ((Date.now() - t0) / 1000))}/s)`);
      }, 5000);
      let outcome: WindowOutcome;
      try {
        outcome = await m.service.migrateWindow(window);
      } finally {
        clearInterval(progress);
      }
      const wallS = (Date.now() - t0) / 1000;
      const after = cpuNow(pids);
      const done = outcome.status === 'completed' ? outcome : { timers: NaN, fires: NaN, inserted: NaN };
      const cpu = { migrator: after.migrator - before.migrator, mariadb: after.mariadb - before.mariadb, redis: after.redis - before.redis };
      rows.push({
        window: new Date(window.start).toISOString().slice(0, 16),
        status: outcome.status,
        timersRead: done.timers,
        fires: done.fires,
        inserted: done.inserted,
        wallS: round(wallS, 2),
        migratorCpuS: round(cpu.migrator, 2),
        mariadbCpuS: round(cpu.mariadb, 2),
        redisCpuS: round(cpu.redis, 2),
        firesPerS: Math.round(done.fires / wallS),
        coreShare: round(((cpu.migrator + cpu.mariadb + cpu.redis) / (H / 1000)) * 100, 3),
      });
      log(`${label} window ${k + 1}/${count} ${rows[k].window}: ${outcome.status}, ${done.timers} timers read, ${done.fires} fires in ${round(wallS, 2)} s; CPU s migrator ${rows[k].migratorCpuS}, MariaDB ${rows[k].mariadbCpuS}, Redis ${rows[k].redisCpuS}`);
    }
  } finally {
    await m.close();
  }
  return rows;
}

interface Storage {
  timers: { rows: number; dataBytes: number; indexBytes: number; bytesPerTimer: number };
  tasks: { rows: number; dataBytes: number; indexBytes: number; bytesPerFire: number };
  redis: { usedMemoryDelta: number; indexedFires: number; bytesPerFire: number };
}

async function storage(s: Stack, redisBefore: number, indexedFires: number): Promise<Storage> {
  await s.sql('ANALYZE TABLE timers, tasks');
  const sizes = await s.sql<{ t: string; d: string; i: string }>(
    "SELECT table_name AS t, data_length AS d, index_length AS i FROM information_schema.tables WHERE table_schema = ? AND table_name IN ('timers', 'tasks')",
    [s.dbName],
  );
  const size = (t: string) => sizes.find((r) => r.t === t) ?? { d: 'NaN', i: 'NaN' };
  const count = async (t: string) => Number((await s.sql<{ n: string }>(`SELECT COUNT(*) AS n FROM ${t}`))[0].n);
  const [timers, tasks] = [await count('timers'), await count('tasks')];
  const used = (await redisUsedMemory(s.redis())) - redisBefore;
  const per = (bytes: number, n: number) => Math.round(bytes / Math.max(1, n));
  return {
    timers: { rows: timers, dataBytes: Number(size('timers').d), indexBytes: Number(size('timers').i), bytesPerTimer: per(Number(size('timers').d) + Number(size('timers').i), timers) },
    tasks: { rows: tasks, dataBytes: Number(size('tasks').d), indexBytes: Number(size('tasks').i), bytesPerFire: per(Number(size('tasks').d) + Number(size('tasks').i), tasks) },
    redis: { usedMemoryDelta: used, indexedFires, bytesPerFire: per(used, indexedFires) },
  };
}

/** The first window start at least three hours ahead (whole UTC hour), so no fire is due meanwhile. */
const firstWindow = () => Math.ceil(Date.now() / H) * H + 3 * H;

async function mixPhase(args: Args): Promise<{ insertMs: number; windows: WindowRow[]; storage: Storage }> {
  const w0 = firstWindow();
  let insertMs = 0;
  const stack = await Stack.start({ id: shortId('scale'), roles: [], beforeRoles: async (s) => void (insertMs = await insertTimers(s, args.timers, (i) => mixTimer(i, w0), w0, 'mix')) });
  try {
    log(`mix: ${args.timers} timers inserted in ${round(insertMs / 1000)} s; expanding ${args.windows} windows from ${new Date(w0).toISOString()}`);
    const redisBefore = await redisUsedMemory(stack.redis());
    const windows = await expandWindows(stack, w0, args.windows, 'mix');
    const indexed = windows.reduce((n, w) => n + (Number.isFinite(w.inserted) ? w.inserted : 0), 0);
    return { insertMs, windows, storage: await storage(stack, redisBefore, indexed) };
  } finally {
    await stack.stop();
  }
}

async function sparsePhase(args: Args): Promise<WindowRow[]> {
  // The day's 03:00 UTC window, at least three hours ahead.
  const day = 24 * H;
  let w0 = Math.floor(Date.now() / day) * day + 3 * H;
  while (w0 < firstWindow()) w0 += day;
  const stack = await Stack.start({ id: shortId('scale'), roles: [], beforeRoles: async (s) => void (await insertTimers(s, args.timers, sparseTimer, w0, 'sparse')) });
  try {
    return await expandWindows(stack, w0, 3, 'sparse');
  } finally {
    await stack.stop();
  }
}

interface ApiResult {
  seconds: number;
  concurrency: number;
  processes: number;
  /** Apps the loops create in (loop k in app k mod apps). */
  apps: number;
  /** Timers per request: 1 = a create and an enable per timer, N > 1 = one POST def/batch of N. */
  batch: number;
  requests: number;
  created: number;
  perS: number;
  latencyMs: Record<string, number | null>;
  errors: number;
  /** CPU ms per timer created and enabled, by process (client: this process, its HTTP calls). */
  cpuMsPerTimer: { api: number; mariadb: number; redis: number; client: number };
  /** MariaDB statements per timer (global `Questions`, the whole server: run alone), and row-lock waits per timer. */
  mysqlPerTimer: { statements: number; rowLockWaits: number; byCommand: Record<string, number> };
}

/** MariaDB's global counters the API phase reports per timer. */
async function mysqlCounters(stack: Stack): Promise<{ questions: number; rowLockWaits: number; com: Map<string, number> }> {
  const [rows] = await stack.db().query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Innodb_row_lock_waits') OR Variable_name LIKE 'Com\\_%'");
  const v = new Map((rows as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name, Number(r.Value)]));
  const com = new Map([...v].filter(([k]) => k.startsWith('Com_')));
  return { questions: v.get('Questions') ?? NaN, rowLockWaits: v.get('Innodb_row_lock_waits') ?? NaN, com };
}

/**
 * The two calls of a create + enable over undici's pooled `request` (keep-alive, one connection per
 * loop), not `fetch`: the requests, bodies and answers checked are the same as `ApiClient`'s, but
 * fetch cost this process ~2 ms of CPU per timer on the 2 cores the api and MariaDB share.
 */
class LeanApi {
  private readonly pool: Pool;

  constructor(baseUrl: string, connections: number) {
    this.pool = new Pool(baseUrl, { connections });
  }

  /** One POST def/batch creating and enabling `timers` of `app`; returns their ids. */
  async createEnabledBatch(app: string, timers: Record<string, unknown>[]): Promise<string[]> {
    const { data } = await this.post<{ data: { timers: { id: number }[] } }>('/api/timer/v1/def/batch', { app, enable: true, timers });
    if (data.timers.length !== timers.length) throw new Error(`POST def/batch: ${data.timers.length} timers answered for ${timers.length}`);
    return data.timers.map((t) => String(t.id));
  }

  async createEnabled(t: Record<string, unknown> & { app: string }): Promise<string> {
    const { id } = await this.post<{ id: number }>('/api/timer/v1/def', t);
    await this.post('/api/timer/v1/enable', { app: t.app, id });
    return String(id);
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    const res = await this.pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const parsed = (await res.body.json()) as T & { code?: number; msg?: string };
    if (res.statusCode >= 300 || parsed.code !== 0) throw new Error(`POST ${path}: ${res.statusCode} ${JSON.stringify(parsed)}`);
    return parsed;
  }
}

/** Create + enable of typical timers (hourly and daily crons) through the api, for `seconds`. */
async function apiPhase(args: Args): Promise<ApiResult> {
  const processes = Math.max(1, args.apiProcesses);
  const stack = await Stack.start({ id: shortId('scale'), roles: ['api'], replicas: { api: processes }, env: { TIMER_LOG_LEVEL: 'warn' } });
  try {
    const until = Date.now() + args.apiSeconds * 1000;
    const urls = [stack.api.baseUrl, ...stack.replicaProcesses.filter((r) => r.role === 'api').map((r) => `http://127.0.0.1:${r.port}`)];
    const apis = urls.map((u) => new LeanApi(u, Math.ceil(args.apiConcurrency / urls.length)));
    const latencies: number[] = [];
    let created = 0;
    let errors = 0;
    let n = 0;
    const perRequest = Math.max(1, args.apiBatch);
    const typical = (i: number) => ({
      name: `api-${i}`,
      cron: i % 2 === 0 ? `0 ${i % 60} * * * *` : `0 ${i % 60} ${i % 24} * * *`,
      timeZone: ZONES[i % ZONES.length],
      notifyHTTPParam: { url: 'https://hooks.example.com/scale', method: 'POST' },
    });
    const apps = Math.max(1, args.apiApps);
    const loop = async (k: number) => {
      const api = apis[k % apis.length];
      const app = apps === 1 ? APP : `${APP}-${k % apps}`;
      while (Date.now() < until) {
        const first = n;
        n += perRequest;
        const t0 = performance.now();
        try {
          if (perRequest === 1) await api.createEnabled({ app, ...typical(first) });
          else await api.createEnabledBatch(app, Array.from({ length: perRequest }, (_, j) => typical(first + j)));
          latencies.push(performance.now() - t0);
          created += perRequest;
        } catch (e) {
          if (errors++ === 0) log(`api: first error: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
    };
    const pids = { mariadb: serverPid('mariadbd', 'mysqld'), redis: serverPid('redis-server') };
    const sql0 = await mysqlCounters(stack);
    const cpu0 = { api: stack.cpuSeconds().api, ...cpuNow(pids) };
    const client0 = process.cpuUsage();
    const t0 = Date.now();
    const progress = setInterval(() => log(`api: ${created} timers created and enabled (${Math.round(created / ((Date.now() - t0) / 1000))}/s), ${errors} errors`), 5000);
    try {
      await Promise.all(Array.from({ length: args.apiConcurrency }, (_, k) => loop(k)));
    } finally {
      clearInterval(progress);
      await Promise.all(apis.map((a) => a.close()));
    }
    const secs = (Date.now() - t0) / 1000;
    const cpu1 = { api: stack.cpuSeconds().api, ...cpuNow(pids) };
    const client = process.cpuUsage(client0);
    const sql1 = await mysqlCounters(stack);
    const perTimer = (a: number, b: number) => round(((b - a) * 1000) / Math.max(1, created), 3);
    const p = percentiles(latencies);
    return {
      seconds: round(secs),
      concurrency: args.apiConcurrency,
      processes,
      apps,
      batch: perRequest,
      requests: latencies.length,
      created,
      perS: Math.round(created / secs),
      latencyMs: { p50: p.p50, p95: p.p95, p99: p.p99, max: p.max },
      errors,
      cpuMsPerTimer: { api: perTimer(cpu0.api, cpu1.api), mariadb: perTimer(cpu0.mariadb, cpu1.mariadb), redis: perTimer(cpu0.redis, cpu1.redis), client: perTimer(0, (client.user + client.system) / 1e6) },
      // Less the one SHOW of the first sample (the second is counted in its own result).
      mysqlPerTimer: { statements: round((sql1.questions - sql0.questions - 1) / Math.max(1, created), 2), rowLockWaits: round((sql1.rowLockWaits - sql0.rowLockWaits) / Math.max(1, created), 2),
        byCommand: Object.fromEntries(
          [...sql1.com].map(([k, n]) => [k.slice(4), round((n - (sql0.com.get(k) ?? 0)) / Math.max(1, created), 2)] as const).filter(([, n]) => n >= 0.01),
        ),
      },
    };
  } finally {
    await stack.stop();
  }
}

const WINDOW_HEAD = ['window (UTC)', 'status', 'timers read', 'fires', 'wall s', 'migrator CPU s', 'MariaDB CPU s', 'Redis CPU s', 'fires/s', '% of a core over the hour'];
const windowCells = (w: WindowRow) => [w.window, w.status, w.timersRead, w.fires, w.wallS, w.migratorCpuS, w.mariadbCpuS, w.redisCpuS, w.firesPerS, w.coreShare];

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  if (args.timers < 100 || args.windows < 1) throw new Error('need --timers >= 100 and --windows >= 1');
  Logger.overrideLogger(['error', 'warn']);
  log(`bench:scale: ${args.timers} timers, ${args.windows} windows; mix ${JSON.stringify(MIX)} (% of timers), ${ZONES.length} time zones`);
  const mix = args.mix ? await mixPhase(args) : undefined;
  const sparse = args.sparse ? await sparsePhase(args) : undefined;
  const api = args.apiSeconds > 0 ? await apiPhase(args) : undefined;

  const cost = (w: WindowRow) => w.migratorCpuS + w.mariadbCpuS + w.redisCpuS;
  const ratio = sparse && sparse.length === 3 ? { wall: round((((sparse[1].wallS + sparse[2].wallS) / 2) / sparse[0].wallS) * 100, 2), cpu: round((((cost(sparse[1]) + cost(sparse[2])) / 2) / cost(sparse[0])) * 100, 2) } : undefined;
  const s = mix?.storage;
  const md = [
    `# bench:scale, ${args.timers} timers (${new Date().toISOString()})`,
    ...(mix && s
      ? [
    '',
    `Mix (% of timers): ${Object.entries(MIX).map(([k, v]) => `${k} ${v}`).join(', ')}; ${ZONES.length} time zones; inserted in ${round(mix.insertMs / 1000)} s.`,
    'Each window expanded by MigratorService in this process (one migrator, no replicas), the clock two windows ahead of it.',
    '',
    markdownTable(WINDOW_HEAD, mix.windows.map(windowCells), 3),
    '',
    markdownTable(
      ['storage', 'rows', 'data bytes', 'index bytes', 'bytes per row'],
      [
        ['MySQL timers', s.timers.rows, s.timers.dataBytes, s.timers.indexBytes, s.timers.bytesPerTimer],
        ['MySQL tasks (fires)', s.tasks.rows, s.tasks.dataBytes, s.tasks.indexBytes, s.tasks.bytesPerFire],
        ['Redis slice index (used_memory delta)', s.redis.indexedFires, s.redis.usedMemoryDelta, null, s.redis.bytesPerFire],
      ],
    ),
        ]
      : []),
    ...(sparse
      ? [
          '',
          '## Proportionality: 99 % of the timers fire at 03:00 UTC once a day, 1 % every hour',
          '',
          markdownTable(WINDOW_HEAD, sparse.map(windowCells), 3),
          '',
          `A 1 % window costs ${ratio?.wall} % of the full window's wall time and ${ratio?.cpu} % of its CPU (migrator + MariaDB + Redis); target under 5 %.`,
        ]
      : []),
    ...(api
      ? [
          '',
          `## API create + enable of typical timers (hourly and daily crons), ${api.concurrency} concurrent loops, ${api.processes} api process(es), ${api.apps === 1 ? 'one app' : `${api.apps} apps`}, ${api.seconds} s, ` +
            (api.batch === 1 ? 'a create and an enable per timer' : `POST def/batch of ${api.batch} timers with enable:true (${api.requests} requests; latency per request, which is each of its timers')`),
          '',
          markdownTable(
            ['created + enabled', 'per s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'errors', 'CPU ms per timer: api', 'MariaDB', 'Redis', 'client', 'statements per timer', 'row-lock waits per timer'],
            [[api.created, api.perS, api.latencyMs.p50, api.latencyMs.p95, api.latencyMs.p99, api.latencyMs.max, api.errors, api.cpuMsPerTimer.api, api.cpuMsPerTimer.mariadb, api.cpuMsPerTimer.redis, api.cpuMsPerTimer.client, api.mysqlPerTimer.statements, api.mysqlPerTimer.rowLockWaits]],
            1,
          ),
          '',
          `MariaDB statements per timer by command (Com_*): ${Object.entries(api.mysqlPerTimer.byCommand).map(([k, n]) => `${k} ${n}`).join(', ')}.`,
        ]
      : []),
  ].join('\n');
  const base = writeResults('scale', { args, mix: MIX, zones: ZONES, ...mix, sparse, proportionality: ratio, api }, md);
  process.stdout.write(`\n${md}\n`);
  log(`wrote ${base}.json and .md`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:scale failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
