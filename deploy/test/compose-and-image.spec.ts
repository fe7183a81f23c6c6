import { spawnSync } from 'child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join } from 'path';
import { parse } from 'yaml';

// There is no Docker engine on the machines this is developed on: the compose file and the
// Dockerfile are checked by reading them.
const ROOT = join(__dirname, '..', '..');
const ROLES = ['api', 'migrator', 'scheduler', 'trigger', 'executor'];

/**
 * Node.js LTS lines and their end of life (the Node.js release schedule). The image's line must be
 * one whose end of life is still ahead: this test starts failing the day it passes, on purpose.
 */
const NODE_LTS_END_OF_LIFE: Record<number, string> = { 22: '2027-04-30', 24: '2028-04-30' };

type Service = {
  image?: string;
  build?: unknown;
  pull_policy?: string;
  command?: string[];
  ports?: string[];
  stop_grace_period?: string;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
};

/** A compose duration ("40s", "1m30s", "500ms") in milliseconds. */
function durationMs(text: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 0.001 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us)/g)];
  if (parts.map((p) => p[0]).join('') !== text) throw new Error(`not a compose duration: ${text}`);
  return parts.reduce((ms, [, n, unit]) => ms + Number(n) * units[unit], 0);
}

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
  const s = compose.services;

  it('has the infrastructure, the one-shot migration and the five roles', () => {
    expect(Object.keys(s).sort()).toEqual(['api', 'executor', 'migrate', 'migrator', 'mysql', 'pulsar', 'redis', 'scheduler', 'trigger'].sort());
    expect(s.mysql.image).toMatch(/^mysql:8/);
    expect(s.redis.image).toMatch(/^redis:7/);
    expect(s.migrate.command).toEqual(['migrate']);
  });

  it('runs a Pulsar 4.0 LTS broker with the settings the roles need, on a bounded heap', () => {
    expect(s.pulsar.image).toMatch(/^apachepulsar\/pulsar:4\.0\.\d+$/);
    // The same values as the local broker's config, which the whole test suite runs against.
    const local = Object.fromEntries(
      readFileSync(join(ROOT, 'deploy', 'local', 'pulsar', 'standalone.conf'), 'utf8')
        .split('\n')
        .filter((line) => /^\w+=/.test(line))
        .map((line) => line.split('=', 2) as [string, string]),
    );
    for (const key of ['webSocketServiceEnabled', 'isDelayedDeliveryDeliverAtTimeStrict', 'delayedDeliveryTickTimeMillis', 'brokerDeleteInactiveTopicsEnabled']) {
      expect([key, s.pulsar.environment?.[`PULSAR_PREFIX_${key}`]]).toEqual([key, local[key]]);
    }
    expect(s.pulsar.environment?.PULSAR_MEM).toMatch(/-Xmx\d+[mg]\b/);
    expect(s.pulsar.environment?.PULSAR_MEM).toMatch(/-XX:MaxDirectMemorySize=\d+[mg]\b/);
  });

  it('health-checks the broker with one HTTP GET, not a pulsar-admin JVM', () => {
    const test = s.pulsar.healthcheck?.test ?? [];
    expect(test.slice(0, 2)).toEqual(['CMD', 'curl']);
    expect(test.at(-1)).toMatch(/^http:\/\/127\.0\.0\.1:8080\/admin\/v2\//);
    expect(test.join(' ')).not.toMatch(/pulsar-admin/);
  });

  it('builds the image once and runs it for the migration and every role', () => {
    const builders = Object.entries(s).filter(([, svc]) => svc.build !== undefined).map(([name]) => name);
    expect(builders).toEqual(['migrate']);
    for (const role of ROLES) {
      expect([role, s[role].image, s[role].pull_policy]).toEqual([role, s.migrate.image, 'never']);
    }
  });

  it('gives every role more time to stop than its drain takes', () => {
    for (const role of ROLES) {
      const drainMs = Number(s[role].environment?.TIMER_SHUTDOWN_TIMEOUT_MS);
      expect(drainMs).toBeGreaterThan(0);
      // After the drain the process still closes Redis and MySQL and exits: 5 s for that.
      expect(durationMs(s[role].stop_grace_period ?? '10s')).toBeGreaterThanOrEqual(drainMs + 5_000);
    }
  });

  it('health-checks every server and role, and starts roles only once dependencies are healthy and migrated', () => {
    for (const name of ['mysql', 'redis', 'pulsar', ...ROLES]) expect(s[name].healthcheck?.test.length).toBeGreaterThan(0);
    for (const role of ROLES) {
      expect(s[role].command).toEqual([role]);
      expect(s[role].depends_on).toEqual({
        mysql: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        pulsar: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      });
      expect(s[role].environment?.TIMER_MYSQL_URL).toBe('mysql://timer:timer@mysql:3306/timer');
    }
    expect(s.migrate.depends_on).toEqual({ mysql: { condition: 'service_healthy' } });
  });

  it('publishes the API on 8092', () => {
    expect(s.api.ports).toEqual(['8092:8080']);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('runs a Node.js LTS line whose end of life is still ahead, in both stages', () => {
    const major = Number(/^ARG NODE_MAJOR=(\d+)$/m.exec(dockerfile)?.[1]);
    expect(Object.keys(NODE_LTS_END_OF_LIFE)).toContain(String(major));
    expect(new Date(`${NODE_LTS_END_OF_LIFE[major]}T23:59:59Z`).getTime()).toBeGreaterThan(Date.now());
    expect(dockerfile.match(/^FROM .*/gm)).toEqual([
      'FROM node:${NODE_MAJOR}-bookworm-slim AS build',
      'FROM node:${NODE_MAJOR}-bookworm-slim',
    ]);
  });

  it('builds in one stage and ships production dependencies only in another', () => {
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it('runs as a non-root user with a health check', () => {
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*timer-healthcheck\.js/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/local\/bin\/timer"\]$/m);
  });
});

describe('the image entry point (deploy/docker/entrypoint.sh)', () => {
  // The script run for real with sh, over a stand-in /app whose entry points print what they got.
  const app = mkdtempSync(join(tmpdir(), 'timer-app-'));
  const script = join(app, 'entrypoint.sh');
  const entries = ['apps/ops/src/main.js', 'apps/migrator/src/main.js', 'apps/migrator/src/cli/migrate.js', 'apps/timerctl/src/main.js'];
  beforeAll(() => {
    writeFileSync(script, readFileSync(join(ROOT, 'deploy', 'docker', 'entrypoint.sh'), 'utf8').replace(/^cd \/app$/m, `cd '${app}'`));
    mkdirSync(join(app, 'scripts'));
    writeFileSync(join(app, 'scripts', 'register-paths.js'), '');
    for (const entry of entries) {
      mkdirSync(join(app, 'dist', dirname(entry)), { recursive: true });
      writeFileSync(join(app, 'dist', entry), `console.log(JSON.stringify([${JSON.stringify(entry)}, ...process.argv.slice(2)]))`);
    }
  });
  afterAll(() => rmSync(app, { recursive: true, force: true }));
  const run = (...args: string[]) => spawnSync('sh', [script, ...args], { encoding: 'utf8' });

  it('runs the ops command with its arguments', () => {
    const ops = run('ops', 'replay', '--max', '5');
    expect([ops.status, ops.stderr]).toEqual([0, '']);
    expect(JSON.parse(ops.stdout)).toEqual(['apps/ops/src/main.js', 'replay', '--max', '5']);
  });

  it('runs timerctl with its arguments', () => {
    const ctl = run('timerctl', 'timers', 'list', '-o', 'json');
    expect([ctl.status, ctl.stderr]).toEqual([0, '']);
    expect(JSON.parse(ctl.stdout)).toEqual(['apps/timerctl/src/main.js', 'timers', 'list', '-o', 'json']);
  });

  it('runs a role, and the migration, and refuses anything else', () => {
    expect(JSON.parse(run('migrator').stdout)).toEqual(['apps/migrator/src/main.js']);
    expect(JSON.parse(run('migrate').stdout)).toEqual(['apps/migrator/src/cli/migrate.js']);
    const unknown = run('opz');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/usage: timer .*\|ops/);
  });
});
