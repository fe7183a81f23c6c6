import { randomBytes } from 'crypto';
import { connect, createServer } from 'net';
import Redis from 'ioredis';

export interface TestEnv {
  mysqlUrl: string;
  redisUrl: string;
  pulsarUrl: string;
  pulsarTenant: string;
}

/** The infrastructure the integration tests use; see test-env.js beside this file for the defaults. */
export function testEnv(): TestEnv {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./test-env.js') as { defaults: () => TestEnv }).defaults();
}

/**
 * The environment for running `deploy/local/pulsar.sh` (its `restart`) from a test: the script acts on
 * the broker of its web port, 8080 unless TIMER_LOCAL_PULSAR_WEB_PORT says otherwise, so it is told the
 * port of the broker the test talks to. A run against a second broker (TIMER_PULSAR_URL on another
 * port) then restarts that one, never the broker on the default port.
 */
export function brokerScriptEnv(pulsarUrl: string = testEnv().pulsarUrl): NodeJS.ProcessEnv {
  const url = new URL(pulsarUrl);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return { ...process.env, TIMER_LOCAL_PULSAR_WEB_PORT: port };
}

/** A short random suffix that keeps keys, topics and rows of parallel test files apart. */
export function uniqueId(prefix = 't'): string {
  return `${prefix}${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** Polls `probe` until it returns a truthy value or the deadline passes (then throws naming `what`). */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A TCP port free on 127.0.0.1 right now (for a server a test starts itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Deletes a test's Pulsar namespace and its topics (`tenant/namespace`), so the shared broker does not
 * keep every run's topics and subscriptions loaded. A missing namespace is not an error.
 */
export async function deletePulsarNamespace(pulsarUrl: string, namespace: string): Promise<void> {
  const ns = `${pulsarUrl}/admin/v2/namespaces/${namespace}`;
  const timeout = () => AbortSignal.timeout(15_000);
  const res = await fetch(`${ns}?force=true`, { method: 'DELETE', signal: timeout() });
  if (res.ok || res.status === 404) return;
  // Brokers without forceDeleteNamespaceAllowed: delete the topics first.
  const topics = (await (await fetch(`${ns}/topics`, { signal: timeout() })).json().catch(() => [])) as string[];
  for (const t of topics) {
    await fetch(`${pulsarUrl}/admin/v2/${t.replace('://', '/')}?force=true`, { method: 'DELETE', signal: timeout() }).catch(() => undefined);
  }
  await fetch(ns, { method: 'DELETE', signal: timeout() });
}

/** Deletes every key under `prefix` (a test's own keys on the shared test Redis). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}

/**
 * For the enclosing describe: a client on the test Redis, and a fresh key prefix per test whose keys
 * are deleted after it. Read `redis` and `prefix` inside hooks and tests (the hooks set them).
 */
export function redisTestContext(idPrefix = 'it'): { readonly redis: Redis; readonly prefix: string } {
  let redis: Redis | undefined;
  let prefix = '';
  beforeAll(() => {
    redis = new Redis(testEnv().redisUrl, { maxRetriesPerRequest: 1 });
  });
  beforeEach(() => {
    prefix = `${uniqueId(idPrefix)}:`;
  });
  afterEach(() => deleteKeys(redis!, prefix));
  afterAll(async () => {
    await redis?.quit();
  });
  return {
    get redis() {
      return redis!;
    },
    get prefix() {
      return prefix;
    },
  };
}

/**
 * A slow HTTP client on a raw socket: writes `head`, then `trickle` one byte a second. Resolves with
 * what the server answered and how long it kept the connection open.
 */
export function slowClient(port: number, head: string, trickle = ''): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    let answer = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let i = 0;
    const drip = setInterval(() => i < trickle.length && !socket.destroyed && socket.write(trickle[i++]), 1000);
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
  });
}
