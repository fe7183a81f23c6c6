import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { createConnection, createPool, Pool } from 'mysql2/promise';
import { ApiClient } from './api-client';

/**
 * The five built roles as separate OS processes against the real MariaDB, Redis and Pulsar, on a
 * fresh migrated database `timer_test_<id>`, a Redis DB (default 1) under a unique key prefix and a
 * unique Pulsar namespace of tenant `timer-test`, on free ports. Needs `npm run build` (dist/).
 * Shared by the e2e tests and bench/pipeline.
 */
export const ROLES = ['api', 'migrator', 'scheduler', 'trigger', 'executor'] as const;
export type Role = (typeof ROLES)[number];

const ROOT = join(__dirname, '..', '..').replace(/[\\/]dist$/, '');
/** The checkout's root (the same from the sources and from dist/). */
export const ROOT_DIR = existsSync(join(ROOT, 'package.json')) ? ROOT : join(ROOT, '..');

/** The servers the tests use (the same defaults as libs/testing/src/test-env.js, which the bench cannot load). */
export function infra(): { mysqlUrl: string; redisUrl: string; pulsarUrl: string; pulsarTenant: string } {
  return {
    mysqlUrl: process.env.TIMER_MYSQL_URL || 'mysql://timer:timer@127.0.0.1:3306/timer_test',
    redisUrl: process.env.TIMER_REDIS_URL || 'redis://127.0.0.1:6379/1',
    pulsarUrl: process.env.TIMER_PULSAR_URL || 'http://127.0.0.1:8080',
    pulsarTenant: process.env.TIMER_PULSAR_TENANT || 'timer-test',
  };
}

export function shortId(prefix = 'e'): string {
  return `${prefix}${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

export interface StackOptions {
  /** Names the database, key prefix, namespace and log folder; default a unique id. */
  id?: string;
  roles?: readonly Role[];
  /** Extra variables for every role (e.g. shorter leases). */
  env?: Record<string, string>;
  roleEnv?: Partial<Record<Role, Record<string, string>>>;
  /** Redis database number (default: the one of TIMER_REDIS_URL, else 1). */
  redisDb?: number;
  /** Admin token for the API (auth stays on); default: auth disabled. */
  adminToken?: string;
  /** Time each role may take to answer /health 200. */
  healthTimeoutMs?: number;
  /** Before starting the roles (the database is migrated): e.g. bulk-load timers. */
  beforeRoles?: (stack: Stack) => Promise<void>;
  /** Processes per role (default 1): the extra ones run on their own ports, as replicas would. */
  replicas?: Partial<Record<Role, number>>;
}

interface RoleProcess {
  role: Role;
  port: number;
  child: ChildProcess;
  log: WriteStream;
  tail: string;
  /** CPU seconds of earlier (killed) processes of this role. */
  cpuBefore: number;
  lastCpu: number;
}

/**
 * A port free now for a role to listen on, drawn below the kernel's ephemeral range (32768-60999 by
 * default). A port from listen(0) comes from that range, so between its close here and the role's
 * bind another test file's stack (jest runs several at once) could be handed the same one: a role then
 * failed to bind while another stack's role answered its /health and, later, 404 to its API calls.
 */
async function freePort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = PORT_FROM + Math.floor(Math.random() * PORT_SPAN);
    if (!handedOut.has(port) && (await canListen(port))) {
      handedOut.add(port);
      return port;
    }
    if (tries >= 100) throw new Error(`no free port in [${PORT_FROM}, ${PORT_FROM + PORT_SPAN}) after 100 tries`);
  }
}
const PORT_FROM = 20_000;
const PORT_SPAN = 12_000;
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** utime + stime of a process in seconds (Linux /proc), undefined when it is gone. */
export function procCpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends `signal`, and SIGKILL when the process has not exited within timeoutMs; resolves once it is
 * gone, with its exit code and whether it took the SIGKILL.
 */
async function signalAndWait(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<{ code: number | null; killed: boolean }> {
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, killed: false };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  child.kill(signal);
  const code = await exited;
  clearTimeout(timer);
  return { code, killed };
}

export class Stack {
  readonly id: string;
  readonly dbName: string;
  readonly mysqlUrl: string;
  readonly redisUrl: string;
  readonly keyPrefix: string;
  readonly tenant: string;
  readonly namespace: string;
  readonly pulsarUrl: string;
  readonly logDir: string;
  readonly api: ApiClient;
  readonly processes = new Map<Role, RoleProcess>();
  /** The second and later processes of a role (options.replicas). */
  readonly replicaProcesses: RoleProcess[] = [];
  private pool?: Pool;
  private redisClient?: Redis;
  private readonly ports = new Map<Role, number>();

  private constructor(
    private readonly options: StackOptions,
    ports: Map<Role, number>,
  ) {
    const base = infra();
    this.id = options.id ?? shortId();
    this.dbName = `timer_test_${this.id}`;
    this.mysqlUrl = Object.assign(new URL(base.mysqlUrl), { pathname: `/${this.dbName}` }).toString();
    const redis = new URL(base.redisUrl);
    if (options.redisDb !== undefined) redis.pathname = `/${options.redisDb}`;
    else if (redis.pathname === '/' || redis.pathname === '') redis.pathname = '/1';
    this.redisUrl = redis.toString();
    this.keyPrefix = `${this.id}:`;
    this.tenant = base.pulsarTenant;
    this.namespace = `ns-${this.id}`;
    this.pulsarUrl = base.pulsarUrl;
    this.logDir = join(tmpdir(), 'timer-e2e', this.id);
    this.ports = ports;
    this.api = new ApiClient(`http://127.0.0.1:${ports.get('api')}`, options.adminToken);
  }

  /** Creates and migrates the database, starts the roles and waits until each answers /health 200. */
  static async start(options: StackOptions = {}): Promise<Stack> {
    if (!existsSync(join(ROOT_DIR, 'dist/apps/api/src/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    const ports = new Map<Role, number>();
    for (const role of ROLES) ports.set(role, await freePort());
    const stack = new Stack(options, ports);
    mkdirSync(stack.logDir, { recursive: true });
    await stack.createDatabase();
    try {
      if (options.beforeRoles) await options.beforeRoles(stack);
      for (const role of options.roles ?? ROLES) stack.spawn(role);
      const extra: Promise<void>[] = [];
      for (const role of options.roles ?? ROLES) {
        for (let n = 2; n <= (options.replicas?.[role] ?? 1); n++) extra.push(stack.spawnReplica(role, n, await freePort()));
      }
      await Promise.all([...(options.roles ?? ROLES).map((r) => stack.waitHealthy(r)), ...extra]);
    } catch (e) {
      await stack.stop();
      throw e;
    }
    return stack;
  }

  port(role: Role): number {
    return this.ports.get(role)!;
  }

  /** The environment every role of this stack runs with. */
  env(role: Role): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TIMER_HTTP_PORT: String(this.port(role)),
      TIMER_MYSQL_URL: this.mysqlUrl,
      TIMER_REDIS_URL: this.redisUrl,
      TIMER_REDIS_KEY_PREFIX: this.keyPrefix,
      TIMER_PULSAR_URL: this.pulsarUrl,
      TIMER_PULSAR_TENANT: this.tenant,
      TIMER_PULSAR_NAMESPACE: this.namespace,
      TIMER_CALLBACK_ALLOW_PRIVATE: 'true',
      ...(this.options.adminToken ? { TIMER_ADMIN_TOKEN: this.options.adminToken } : { TIMER_AUTH_DISABLED: 'true' }),
      TIMER_RATE_LIMIT_PER_SEC: '0',
      TIMER_LOG_FORMAT: 'json',
      TIMER_SHUTDOWN_TIMEOUT_MS: '10000',
      // As the image and `npm run up` run the roles (README, "Configuration").
      NODE_OPTIONS: '--max-semi-space-size=64',
      ...this.options.env,
      ...this.options.roleEnv?.[role],
    };
  }

  /** Starts (another process of) a role; does not wait for health. */
  spawn(role: Role): ChildProcess {
    const prev = this.processes.get(role);
    if (prev && prev.child.exitCode === null && prev.child.signalCode === null) throw new Error(`${role} is still running`);
    const p = this.startProcess(role, this.port(role), prev, join(this.logDir, `${role}.log`));
    this.processes.set(role, p);
    return p.child;
  }

  /** Starts replica n (>= 2) of a role on `port` and waits for its health. */
  private async spawnReplica(role: Role, n: number, port: number): Promise<void> {
    const p = this.startProcess(role, port, undefined, join(this.logDir, `${role}-${n}.log`));
    this.replicaProcesses.push(p);
    await this.waitHealthy(role, undefined, p);
  }

  private startProcess(role: Role, port: number, prev: RoleProcess | undefined, logFile: string): RoleProcess {
    // STACK_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the roles of a benchmark run;
    // STACK_NODE_ARGS_<ROLE> (e.g. STACK_NODE_ARGS_EXECUTOR) one role only, leaving the others' CPU as it is.
    const nodeArgs = [process.env.STACK_NODE_ARGS, process.env[`STACK_NODE_ARGS_${role.toUpperCase()}`]].join(' ').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...nodeArgs, '-r', './scripts/register-paths.js', `dist/apps/${role}/src/main.js`], {
      cwd: ROOT_DIR,
      env: { ...this.env(role), TIMER_HTTP_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = prev?.log ?? createWriteStream(logFile, { flags: 'a' });
    const p: RoleProcess = { role, port, child, log, tail: prev?.tail ?? '', cpuBefore: prev ? prev.cpuBefore + prev.lastCpu : 0, lastCpu: 0 };
    const onData = (d: Buffer) => {
      log.write(d);
      p.tail = (p.tail + d.toString()).slice(-20_000);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    log.write(`\n=== ${new Date().toISOString()} started pid ${child.pid}\n`);
    return p;
  }

  /** The last output of a role (all its processes), for failure messages. */
  output(role: Role): string {
    return this.processes.get(role)?.tail ?? '';
  }

  async waitHealthy(role: Role, timeoutMs = this.options.healthTimeoutMs ?? 90_000, p = this.processes.get(role)): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (p && (p.child.exitCode !== null || p.child.signalCode !== null)) {
        throw new Error(`${role} exited (${p.child.exitCode ?? p.child.signalCode}) before it was healthy\n--- ${role} output ---\n${p.tail.slice(-4000)}`);
      }
      const res = await fetch(`http://127.0.0.1:${p?.port ?? this.port(role)}/health`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
      if (res) await res.arrayBuffer().catch(() => undefined);
      if (res?.status === 200) return;
      if (Date.now() > deadline) throw new Error(`${role} did not answer /health 200 within ${timeoutMs} ms\n--- ${role} output ---\n${p?.tail.slice(-4000)}`);
      await sleep(250);
    }
  }

  /** Sends `signal` to a role's process and waits for it to exit. */
  async kill(role: Role, signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 30_000): Promise<number | null> {
    const p = this.processes.get(role);
    return p ? this.stopProcess(p, signal, timeoutMs) : null;
  }

  /** Starts a role again (after kill) and waits for its health. */
  async restart(role: Role): Promise<void> {
    this.spawn(role);
    await this.waitHealthy(role);
  }

  /** Every process of a role: index 0 is the one `kill` and `restart` act on, 1.. its replicas in start order. */
  members(role: Role): { index: number; pid: number | undefined; port: number; running: boolean }[] {
    return this.roleProcesses(role).map((p, index) => ({ index, pid: p.child.pid, port: p.port, running: p.child.exitCode === null && p.child.signalCode === null }));
  }

  /** `kill` for any process of a role (`members` gives the indexes). */
  async killMember(role: Role, index: number, signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 30_000): Promise<number | null> {
    return this.stopProcess(this.member(role, index), signal, timeoutMs);
  }

  /** `restart` for any process of a role: the same port and log, then waits for its health. */
  async restartMember(role: Role, index: number): Promise<void> {
    if (index === 0) return this.restart(role);
    const prev = this.member(role, index);
    if (prev.child.exitCode === null && prev.child.signalCode === null) throw new Error(`${role} #${index} is still running`);
    const p = this.startProcess(role, prev.port, prev, '');
    this.replicaProcesses[this.replicaProcesses.indexOf(prev)] = p;
    await this.waitHealthy(role, undefined, p);
  }

  private roleProcesses(role: Role): RoleProcess[] {
    const first = this.processes.get(role);
    return [...(first ? [first] : []), ...this.replicaProcesses.filter((p) => p.role === role)];
  }

  private member(role: Role, index: number): RoleProcess {
    const p = this.roleProcesses(role)[index];
    if (!p) throw new Error(`${role} has no process #${index}`);
    return p;
  }

  private async stopProcess(p: RoleProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<number | null> {
    p.lastCpu = procCpuSeconds(p.child.pid) ?? p.lastCpu;
    if (p.child.exitCode !== null || p.child.signalCode !== null) return p.child.exitCode;
    const { code, killed } = await signalAndWait(p.child, signal, timeoutMs);
    if (!killed) p.log.write(`\n=== ${new Date().toISOString()} ${signal}: exited ${code ?? p.child.signalCode}\n`);
    return code;
  }

  /** CPU seconds each role's processes used so far (killed incarnations included). */
  cpuSeconds(): Record<string, number> {
    const out: Record<string, number> = {};
    // Summed per role over its first process (restarts included) and its replicas.
    for (const p of [...this.processes.values(), ...this.replicaProcesses]) {
      const now = procCpuSeconds(p.child.pid);
      if (now !== undefined && p.child.exitCode === null) p.lastCpu = now;
      out[p.role] = (out[p.role] ?? 0) + p.cpuBefore + p.lastCpu;
    }
    return out;
  }

  pid(role: Role): number | undefined {
    return this.processes.get(role)?.child.pid;
  }

  /** A pool on this stack's database. */
  db(): Pool {
    this.pool ??= createPool({ uri: this.mysqlUrl, connectionLimit: 4, supportBigNumbers: true, bigNumberStrings: true });
    return this.pool;
  }

  async sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
    const [rows] = await this.db().query(query, params);
    return rows as T[];
  }

  /** A client on this stack's Redis database. */
  redis(): Redis {
    this.redisClient ??= new Redis(this.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: false });
    return this.redisClient;
  }

  /** Deletes every key under this stack's prefix (what FLUSHALL does to the service's keys). */
  async deleteOwnKeys(): Promise<number> {
    const r = this.redis();
    let cursor = '0';
    let n = 0;
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${this.keyPrefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) n += await r.del(...keys);
    } while (cursor !== '0');
    return n;
  }

  /** Stops every role (SIGTERM, then SIGKILL), drops the database, the keys and the namespace. */
  async stop(opts: { keepData?: boolean } = {}): Promise<void> {
    await Promise.all([
      ...[...this.processes.keys()].map((r) => this.kill(r, 'SIGTERM', 15_000).catch(() => undefined)),
      ...this.replicaProcesses.map((p) => signalAndWait(p.child, 'SIGTERM', 15_000).catch(() => undefined)),
    ]);
    for (const p of [...this.processes.values(), ...this.replicaProcesses]) p.log.end();
    const keep = opts.keepData || process.env.E2E_KEEP === '1';
    await this.pool?.end().catch(() => undefined);
    this.pool = undefined;
    if (!keep) {
      await this.dropDatabase().catch(() => undefined);
      await this.deleteOwnKeys().catch(() => undefined);
      await this.deleteNamespace().catch(() => undefined);
    }
    this.redisClient?.disconnect();
    this.redisClient = undefined;
  }

  /** Topic stats from the broker's admin API (msgInCounter etc.), undefined when the topic is unknown. */
  async topicStats(topic: string): Promise<{ msgInCounter: number } | undefined> {
    const res = await fetch(`${this.pulsarUrl}/admin/v2/persistent/${this.tenant}/${this.namespace}/${topic}/stats`);
    if (!res.ok) return undefined;
    return (await res.json()) as { msgInCounter: number };
  }

  /** The payloads of the first `count` messages of a topic (examined, not consumed). */
  async examineMessages(topic: string, count: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 1; i <= count; i++) {
      const res = await fetch(
        `${this.pulsarUrl}/admin/v2/persistent/${this.tenant}/${this.namespace}/${topic}/examinemessage?initialPosition=earliest&messagePosition=${i}`,
      );
      if (!res.ok) break;
      out.push(Buffer.from(await res.arrayBuffer()).toString('utf8'));
    }
    return out;
  }

  private async createDatabase(): Promise<void> {
    const base = new URL(infra().mysqlUrl);
    base.pathname = '/';
    const admin = await createConnection({ uri: base.toString() });
    try {
      await admin.query(`CREATE DATABASE \`${this.dbName}\``);
    } finally {
      await admin.end();
    }
    const migrate = spawnSync(process.execPath, ['-r', './scripts/register-paths.js', 'dist/apps/migrator/src/cli/migrate.js'], {
      cwd: ROOT_DIR,
      env: { PATH: process.env.PATH, TIMER_MYSQL_URL: this.mysqlUrl },
      encoding: 'utf8',
    });
    if (migrate.status !== 0) throw new Error(`migrate failed (${migrate.status}): ${migrate.stderr}`);
  }

  private async dropDatabase(): Promise<void> {
    const base = new URL(infra().mysqlUrl);
    base.pathname = '/';
    const admin = await createConnection({ uri: base.toString() });
    try {
      await admin.query(`DROP DATABASE IF EXISTS \`${this.dbName}\``);
    } finally {
      await admin.end();
    }
  }

  private async deleteNamespace(): Promise<void> {
    const ns = `${this.pulsarUrl}/admin/v2/namespaces/${this.tenant}/${this.namespace}`;
    const res = await fetch(`${ns}?force=true`, { method: 'DELETE', signal: AbortSignal.timeout(15_000) });
    if (res.ok || res.status === 404) return;
    // Brokers without forceDeleteNamespaceAllowed: delete the topics first.
    const topics = (await (await fetch(ns + '/topics')).json().catch(() => [])) as string[];
    for (const t of topics) {
      await fetch(`${this.pulsarUrl}/admin/v2/${t.replace('://', '/')}?force=true`, { method: 'DELETE', signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
    }
    await fetch(ns, { method: 'DELETE', signal: AbortSignal.timeout(15_000) });
  }
}
