import { ChildProcess, spawn, spawnSync } from 'child_process';
import { existsSync } from 'fs';
import { join } from 'path';
import { eventually, testEnv } from '@timer/testing';

// Starts the five built roles as separate OS processes against the real MariaDB, Redis and Pulsar
// (the way `npm run up` does, on other ports and the test database), then checks their probes,
// metrics and SIGTERM drain. Needs `npm run build` first; `npm test` does it.
// Starting five Node processes on two cores takes seconds; Jest's per-project testTimeout is ignored
// in multi-project runs, so the budget is set here.
jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
const ROLES = ['api', 'migrator', 'scheduler', 'trigger', 'executor'] as const;
const DEPS: Record<(typeof ROLES)[number], string[]> = {
  api: ['mysql', 'redis', 'pulsar'],
  migrator: ['mysql', 'redis', 'pulsar'],
  scheduler: ['redis', 'pulsar'],
  trigger: ['mysql', 'redis', 'pulsar'],
  executor: ['mysql', 'redis', 'pulsar'],
};
const BASE_PORT = 18_092;

function roleEnv(port: number): NodeJS.ProcessEnv {
  const env = testEnv();
  return {
    PATH: process.env.PATH,
    TIMER_HTTP_PORT: String(port),
    TIMER_MYSQL_URL: env.mysqlUrl,
    TIMER_REDIS_URL: env.redisUrl,
    TIMER_PULSAR_URL: env.pulsarUrl,
    TIMER_PULSAR_TENANT: env.pulsarTenant,
    TIMER_LOG_FORMAT: 'json',
  };
}

function start(role: string, env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['-r', './scripts/register-paths.js', `dist/apps/${role}/src/main.js`], { cwd: ROOT, env });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('the five roles as processes', () => {
  const running: { role: string; child: ChildProcess; output: () => string }[] = [];

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist/apps/api/src/main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does)');
    const migrate = spawnSync(process.execPath, ['-r', './scripts/register-paths.js', 'dist/apps/migrator/src/cli/migrate.js'], {
      cwd: ROOT,
      env: roleEnv(0),
      encoding: 'utf8',
    });
    expect(migrate.stderr).toBe('');
    expect(migrate.status).toBe(0);
    ROLES.forEach((role, i) => running.push({ role, ...start(role, roleEnv(BASE_PORT + i)) }));
  });

  afterAll(async () => {
    for (const r of running) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  });

  it.each(ROLES.map((role, i) => [role, BASE_PORT + i] as const))('%s reports each of its dependencies up on /health', async (role, port) => {
    const body = await eventually(
      `${role} /health 200`,
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
        return res?.status === 200 ? ((await res.json()) as { status: string; details: Record<string, { status: string }> }) : undefined;
      },
      60_000,
      250,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n--- ${role} output ---\n${running.find((r) => r.role === role)?.output()}`);
    });
    expect(body.status).toBe('ok');
    expect(Object.keys(body.details).sort()).toEqual([...DEPS[role]].sort());
    for (const dep of DEPS[role]) expect(body.details[dep].status).toBe('up');

    const live = await fetch(`http://127.0.0.1:${port}/health/live`);
    expect(live.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    // prom-client's default metrics keep their standard names (no `timer_` prefix), labelled with the role.
    expect(metrics).toMatch(new RegExp(`^process_cpu_user_seconds_total\\{role="${role}"\\} `, 'm'));
    expect(metrics).not.toMatch(/^timer_(process|nodejs)_/m);
  });

  it('drains and exits 0 on SIGTERM', async () => {
    await Promise.all(
      running.map(async ({ role, child, output }) => {
        child.kill('SIGTERM');
        const code = await exited(child);
        expect({ role, code }).toEqual({ role, code: 0 });
        expect(output()).toContain('stopped cleanly');
      }),
    );
  });

  it('refuses to start with a bad variable, naming it', async () => {
    const { child, output } = start('trigger', { ...roleEnv(BASE_PORT + 10), TIMER_REDIS_URL: 'localhost:6379' });
    expect(await exited(child)).toBe(1);
    // One JSON line (TIMER_LOG_FORMAT=json), like every other line of the role.
    const line = JSON.parse(output()) as { level: string; message: string };
    expect(line.level).toBe('fatal');
    expect(line.message).toMatch(/TIMER_REDIS_URL: .*"localhost:6379"/);
  });
});
