/**
 * REST API benchmark (a command, not a test).
 *
 *   node scripts/run-ts.js bench/api/api.bench.ts [--duration 15] [--connections 50] [--apps 4] [--warmup 2]
 *                                                 [--url http://127.0.0.1:8092 --token <admin token>]
 *
 * Without --url it starts the built api (dist/apps/api) as its own process against the local
 * MariaDB, Redis and Pulsar: a fresh database `timer_test_bench_<ts>` (migrated, dropped at the end),
 * Redis DB from TIMER_REDIS_URL (default DB 1) under a `bench<ts>:` key prefix (deleted at the end),
 * the admin token (auth stays on, so its cost is measured) and TIMER_RATE_LIMIT_PER_SEC=1000000 (the
 * limiter still runs: one Redis call per request; the failed-authentication check adds one per client
 * address and second). With --url it measures a running api with --token.
 *
 * Measures with autocannon (a) create-timer: POST /api/timer/v1/def with unique names over --apps
 * apps, (b) get-timer: GET /api/timer/v1/def over timers created beforehand. Prints a progress line
 * every 2 s; writes bench/results/api-<timestamp>.json and .md.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '@timer/dal';

interface Args {
  url?: string;
  token?: string;
  duration: number;
  connections: number;
  apps: number;
  warmup: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { duration: 15, connections: 50, apps: 4, warmup: 2 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    switch (flag) {
      case '--url':
        args.url = value.replace(/\/$/, '');
        break;
      case '--token':
        args.token = value;
        break;
      case '--duration':
      case '--connections':
      case '--apps':
      case '--warmup': {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 0) throw new Error(`bad ${flag} ${value}`);
        args[flag.slice(2) as 'duration' | 'connections' | 'apps' | 'warmup'] = n;
        break;
      }
      default:
        throw new Error(`unknown argument ${flag}`);
    }
  }
  if (args.apps < 1) throw new Error('--apps must be >= 1');
  return args;
}

interface Phase {
  name: string;
  requestsPerSec: { mean: number; min: number; max: number };
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSec: number;
}

/** A started api process, or the one given by --url. */
interface Target {
  url: string;
  token: string;
  mode: string;
  stop(): Promise<void>;
}

const ROOT = process.cwd();

async function startApi(): Promise<Target> {
  const ts = Date.now().toString(36);
  const mysqlBase = process.env.TIMER_MYSQL_URL || 'mysql://timer:timer@127.0.0.1:3306/timer_test';
  const redisUrl = process.env.TIMER_REDIS_URL || 'redis://127.0.0.1:6379/1';
  const database = `timer_test_bench_${ts}`;
  const prefix = `bench${ts}:`;
  const admin = new DataSource({ ...dataSourceOptions(mysqlBase, 1), migrations: [] });
  await admin.initialize();
  await admin.query(`CREATE DATABASE \`${database}\``);
  const dbUrl = Object.assign(new URL(mysqlBase), { pathname: `/${database}` }).toString();
  await runMigrations(dbUrl);
  const port = 18_192 + Math.floor(Math.random() * 500);
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const child: ChildProcess = spawn(process.execPath, ['-r', './scripts/register-paths.js', 'dist/apps/api/src/main.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      TIMER_HTTP_PORT: String(port),
      TIMER_MYSQL_URL: dbUrl,
      TIMER_REDIS_URL: redisUrl,
      TIMER_REDIS_KEY_PREFIX: prefix,
      TIMER_PULSAR_URL: process.env.TIMER_PULSAR_URL || 'http://127.0.0.1:8080',
      TIMER_PULSAR_TENANT: process.env.TIMER_PULSAR_TENANT || 'timer-test',
      TIMER_ADMIN_TOKEN: token,
      TIMER_RATE_LIMIT_PER_SEC: '1000000',
      TIMER_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`api exited with ${child.exitCode} during start-up`);
      const res = await fetch(`${url}/health`).catch(() => undefined);
      if (res?.status === 200) break;
      if (Date.now() > deadline) throw new Error('api did not become healthy within 60 s');
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (e) {
    if (child.exitCode === null) child.kill('SIGKILL');
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.destroy();
    throw e;
  }
  return {
    url,
    token,
    mode: `started dist/apps/api (one process) on ${url}; admin token; TIMER_RATE_LIMIT_PER_SEC=1000000; database ${database} (dropped after)`,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
      const redis = new Redis(redisUrl);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.destroy();
    },
  };
}

function run(name: string, opts: autocannon.Options): Promise<Phase> {
  return new Promise((resolve, reject) => {
    let count = 0;
    let last = 0;
    const started = Date.now();
    const instance = autocannon(opts, (err, r) => {
      clearInterval(progress);
      if (err) return reject(err);
      resolve({
        name,
        requestsPerSec: { mean: r.requests.average, min: r.requests.min, max: r.requests.max },
        latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, mean: r.latency.average },
        requests: r.requests.total,
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        durationSec: r.duration,
      });
    });
    instance.on('response', () => count++);
    const progress = setInterval(() => {
      const s = ((Date.now() - started) / 1000).toFixed(0);
      console.log(`[${name}] ${s} s: ${count} responses, ${Math.round((count - last) / 2)}/s`);
      last = count;
    }, 2000);
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.url && !args.token) throw new Error('--url needs --token (an admin token)');
  const target: Target = args.url
    ? { url: args.url, token: args.token as string, mode: `running api at ${args.url}`, stop: async () => undefined }
    : await startApi();
  const runId = Date.now().toString(36);
  const apps = Array.from({ length: args.apps }, (_, i) => `bench-${runId}-${i}`);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${target.token}` };
  let seq = 0;
  const createBody = () =>
    JSON.stringify({
      app: apps[seq % apps.length],
      name: `timer-${runId}-${seq++}`,
      cron: '0 */5 * * * *',
      timeZone: 'Europe/Berlin',
      notifyHTTPParam: { url: 'https://hooks.example.com/bench', method: 'POST', header: { 'Content-Type': ['application/json'] }, body: '{"bench":true}' },
    });
  const phases: Phase[] = [];
  try {
    const createOpts = (duration: number): autocannon.Options => ({
      url: target.url,
      connections: args.connections,
      duration,
      requests: [{ method: 'POST', path: '/api/timer/v1/def', headers, setupRequest: (req) => ({ ...req, body: createBody() }) }],
    });
    if (args.warmup > 0) await run('warm-up', createOpts(args.warmup));
    phases.push(await run('create-timer', createOpts(args.duration)));

    // Timers to read: a few hundred created beforehand, read round-robin.
    const ids: { id: number; app: string }[] = [];
    for (let i = 0; i < 300; i++) {
      const res = await fetch(`${target.url}/api/timer/v1/def`, { method: 'POST', headers, body: createBody() });
      const body = (await res.json()) as { code: number; id: number };
      if (body.code !== 0) throw new Error(`create failed: ${JSON.stringify(body)}`);
      ids.push({ id: body.id, app: apps[(seq - 1) % apps.length] });
    }
    let g = 0;
    phases.push(
      await run('get-timer', {
        url: target.url,
        connections: args.connections,
        duration: args.duration,
        requests: [
          {
            method: 'GET',
            headers: { authorization: headers.authorization },
            setupRequest: (req) => {
              const t = ids[g++ % ids.length];
              return { ...req, path: `/api/timer/v1/def?id=${t.id}&app=${t.app}` };
            },
          },
        ],
      }),
    );
  } finally {
    await target.stop();
  }
  report(args, target, phases);
}

function report(args: Args, target: Target, phases: Phase[]): void {
  const at = new Date();
  const data = {
    at: at.toISOString(),
    args,
    target: target.mode,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version },
    targets: { createPerSec: 2000, p99Ms: 50 },
    phases,
  };
  const met = (p: Phase) => (p.requestsPerSec.mean >= 2000 && p.latencyMs.p99 < 50 ? 'met' : 'NOT met');
  const lines = [
    `# API benchmark ${data.at}`,
    '',
    `${target.mode}. ${data.machine.cpus} CPUs (${data.machine.cpuModel}), shared with MariaDB, Redis, Pulsar and autocannon; Node ${data.machine.node}.`,
    `autocannon: ${args.connections} connections, ${args.duration} s per phase (after ${args.warmup} s of create warm-up); creates over ${args.apps} apps with unique names.`,
    '',
    '| phase | req/s (mean) | req/s (min..max per s) | p50 | p90 | p99 | max | requests | non-2xx | errors | target (>= 2000/s, p99 < 50 ms) |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...phases.map(
      (p) =>
        `| ${p.name} | ${Math.round(p.requestsPerSec.mean)} | ${p.requestsPerSec.min}..${p.requestsPerSec.max} | ${p.latencyMs.p50} ms | ${p.latencyMs.p90} ms | ${p.latencyMs.p99} ms | ${p.latencyMs.max} ms | ${p.requests} | ${p.non2xx} | ${p.errors + p.timeouts} | ${met(p)} |`,
    ),
    '',
  ];
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `api-${data.at.replace(/[:.]/g, '-')}`);
  writeFileSync(`${base}.json`, JSON.stringify(data, null, 2) + '\n');
  writeFileSync(`${base}.md`, lines.join('\n'));
  console.log(`\n${lines.join('\n')}\nwritten: ${base}.json, ${base}.md`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e instanceof Error ? e.stack : e);
    process.exit(1);
  },
);
