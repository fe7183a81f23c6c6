import { randomBytes } from 'crypto';

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
