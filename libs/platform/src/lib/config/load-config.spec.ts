import { ConfigError, loadConfig, unknownTimerVariables } from './load-config';
import { MysqlEnv, PulsarEnv, RoleEnv } from './env.config';

describe('loadConfig', () => {
  it('applies defaults when nothing is set', () => {
    const c = loadConfig(RoleEnv, {});
    expect(c.TIMER_HTTP_HOST).toBe('127.0.0.1');
    expect(c.TIMER_HTTP_PORT).toBeUndefined();
    expect(c.TIMER_SHUTDOWN_TIMEOUT_MS).toBe(25_000);
  });

  it('converts numbers and booleans from strings, and treats an empty variable as unset', () => {
    const role = loadConfig(RoleEnv, { TIMER_HTTP_PORT: '9000', TIMER_LOG_LEVEL: '' });
    expect(role.TIMER_HTTP_PORT).toBe(9000);
    expect(role.TIMER_LOG_LEVEL).toBe('log');
    expect(loadConfig(PulsarEnv, { TIMER_PULSAR_PROVISION: 'false' }).TIMER_PULSAR_PROVISION).toBe(false);
    expect(loadConfig(PulsarEnv, { TIMER_PULSAR_TLS_ALLOW_INSECURE: 'true' }).TIMER_PULSAR_TLS_ALLOW_INSECURE).toBe(true);
  });

  it.each<new () => object>([RoleEnv, MysqlEnv, PulsarEnv])('reads every number and boolean of %p from its string form', (cls) => {
    // Conversion relies on the property's design type: a property without a type annotation gets
    // none, and its variable could never be set. Every default must round-trip through a string.
    const defaults = new cls() as unknown as Record<string, unknown>;
    const typed = Object.entries(defaults).filter(([, v]) => typeof v === 'number' || typeof v === 'boolean');
    expect(typed.length).toBeGreaterThan(0);
    const env = Object.fromEntries(typed.map(([k, v]) => [k, String(v)]));
    const loaded = loadConfig(cls, env) as unknown as Record<string, unknown>;
    for (const [k, v] of typed) expect({ [k]: loaded[k] }).toEqual({ [k]: v });
  });

  it('names every bad variable and the value it got', () => {
    let error: unknown;
    try {
      loadConfig(RoleEnv, { TIMER_HTTP_PORT: '70000', TIMER_LOG_FORMAT: 'xml' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/TIMER_HTTP_PORT: .*65535.*"70000"/);
    expect(problems).toMatch(/TIMER_LOG_FORMAT: .*"xml"/);
  });

  it('rejects a URL of the wrong scheme', () => {
    expect(() => loadConfig(MysqlEnv, { TIMER_MYSQL_URL: 'postgres://x@127.0.0.1/db' })).toThrow(/TIMER_MYSQL_URL/);
    expect(loadConfig(MysqlEnv, { TIMER_MYSQL_URL: 'mysql://u:p@db:3306/timer' }).TIMER_MYSQL_URL).toBe('mysql://u:p@db:3306/timer');
  });
});

describe('unknownTimerVariables', () => {
  it('reports TIMER_* names nothing declares, but not the local scripts\' TIMER_LOCAL_*', () => {
    const env = { TIMER_MYSQL_ULR: 'x', TIMER_MYSQL_URL: 'y', TIMER_LOCAL_API_PORT: '1', PATH: '/bin' };
    expect(unknownTimerVariables(['TIMER_MYSQL_URL'], env)).toEqual(['TIMER_MYSQL_ULR']);
  });
});
