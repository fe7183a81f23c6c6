import { ConfigError } from './load-config';
import { KNOWN_VARIABLES, loadRoleConfig } from './role-config';

describe('loadRoleConfig', () => {
  it('uses the role\'s default port from the public contract', () => {
    expect(loadRoleConfig('api', {}).http.port).toBe(8092);
    expect(loadRoleConfig('executor', {}).http.port).toBe(8096);
    expect(loadRoleConfig('executor', { TIMER_HTTP_PORT: '18096' }).http.port).toBe(18096);
  });

  it('validates only the dependencies the role declares', () => {
    // The scheduler uses no MySQL: a broken MySQL URL must not stop it, and asking for it is a bug.
    const scheduler = loadRoleConfig('scheduler', { TIMER_MYSQL_URL: 'nope' });
    expect(scheduler.uses('mysql')).toBe(false);
    expect(() => scheduler.mysql).toThrow(/does not declare a mysql dependency/);
    expect(() => loadRoleConfig('trigger', { TIMER_MYSQL_URL: 'nope' })).toThrow(ConfigError);
  });

  it('collects every problem of every section in one error', () => {
    try {
      loadRoleConfig('api', { TIMER_HTTP_PORT: '0', TIMER_REDIS_URL: 'http://x', TIMER_PULSAR_TENANT: 'bad tenant!' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const names = (e as ConfigError).problems.map((p) => p.split(':')[0]);
      expect(names).toEqual(expect.arrayContaining(['TIMER_HTTP_PORT', 'TIMER_REDIS_URL', 'TIMER_PULSAR_TENANT']));
    }
  });

  it('turns tracing on only with an OTLP endpoint, validated at boot, its headers never repeated', () => {
    expect(loadRoleConfig('trigger', {}).tracing).toBeUndefined();
    expect(loadRoleConfig('trigger', { TIMER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/', TIMER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team = timers' }).tracing).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      headers: { authorization: 'Bearer abc', 'x-team': 'timers' },
    });
    expect(loadRoleConfig('executor', { TIMER_OTLP_ENDPOINT: 'https://otel.example:4318/v1/traces' }).tracing?.url).toBe('https://otel.example:4318/v1/traces');
    expect(() => loadRoleConfig('executor', { TIMER_OTLP_ENDPOINT: 'grpc://127.0.0.1:4317' })).toThrow(/TIMER_OTLP_ENDPOINT/);
    let error: unknown;
    try {
      loadRoleConfig('executor', { TIMER_OTLP_HEADERS: 'token s3cret' });
    } catch (e) {
      error = e;
    }
    expect(String(error)).toMatch(/TIMER_OTLP_HEADERS: .*\(value hidden\)/);
    expect(String(error)).not.toContain('s3cret');
  });

  it('validates the bucket counts of a minute: a maximum below the default stops the boot, naming it', () => {
    expect(loadRoleConfig('migrator', {}).redis).toMatchObject({ TIMER_SLICE_BUCKETS: 10, TIMER_SLICE_BUCKET_FIRES: 200, TIMER_SLICE_BUCKETS_MAX: 64 });
    expect(loadRoleConfig('scheduler', { TIMER_SLICE_BUCKETS: '1', TIMER_SLICE_BUCKET_FIRES: '0', TIMER_SLICE_BUCKETS_MAX: '1' }).redis).toMatchObject({ TIMER_SLICE_BUCKETS: 1, TIMER_SLICE_BUCKET_FIRES: 0, TIMER_SLICE_BUCKETS_MAX: 1 });
    expect(() => loadRoleConfig('migrator', { TIMER_SLICE_BUCKETS: '100', TIMER_SLICE_BUCKETS_MAX: '64' })).toThrow(/TIMER_SLICE_BUCKETS_MAX: must be at least TIMER_SLICE_BUCKETS \(100\)/);
    expect(() => loadRoleConfig('api', { TIMER_SLICE_BUCKETS: '0' })).toThrow(/TIMER_SLICE_BUCKETS: /);
    expect(() => loadRoleConfig('api', { TIMER_SLICE_BUCKETS_MAX: '10001' })).toThrow(/TIMER_SLICE_BUCKETS_MAX: /);
    expect(() => loadRoleConfig('api', { TIMER_SLICE_BUCKET_FIRES: '-1' })).toThrow(/TIMER_SLICE_BUCKET_FIRES: /);
  });

  it('knows the documented variables', () => {
    expect(KNOWN_VARIABLES).toEqual(expect.arrayContaining(['TIMER_MYSQL_URL', 'TIMER_REDIS_URL', 'TIMER_PULSAR_URL', 'TIMER_HTTP_PORT']));
  });
});
