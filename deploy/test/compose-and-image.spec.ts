import { readFileSync } from 'fs';
import { join } from 'path';
import { parse } from 'yaml';

// There is no Docker engine on the machines this is developed on: the compose file and the
// Dockerfile are checked by reading them.
const ROOT = join(__dirname, '..', '..');
const ROLES = ['api', 'migrator', 'scheduler', 'trigger', 'executor'];

type Service = {
  image?: string;
  command?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
};

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
  const s = compose.services;

  it('has the infrastructure, the one-shot migration and the five roles', () => {
    expect(Object.keys(s).sort()).toEqual(['api', 'executor', 'migrate', 'migrator', 'mysql', 'pulsar', 'redis', 'scheduler', 'trigger'].sort());
    expect(s.mysql.image).toMatch(/^mysql:8/);
    expect(s.redis.image).toMatch(/^redis:7/);
    expect(s.pulsar.image).toMatch(/^apachepulsar\/pulsar:3\.0\./);
    expect(s.migrate.command).toEqual(['migrate']);
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
