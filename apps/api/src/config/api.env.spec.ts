import { KNOWN_VARIABLES } from '@timer/platform';
import { ConfigError, loadConfig, loadRoleConfig } from '@timer/platform';
import { AppModule } from '../app.module';
import { API_VARIABLES, ApiConfig, ApiEnv } from './api.env';

describe('ApiEnv', () => {
  it('has documented defaults', () => {
    const c = loadConfig(ApiEnv, {});
    expect(c).toMatchObject({
      TIMER_AUTH_DISABLED: false,
      TIMER_CALLBACK_ALLOW_PRIVATE: false,
      TIMER_RATE_LIMIT_PER_SEC: 500,
      TIMER_AUTH_FAILURES_PER_MIN: 20,
      TIMER_WINDOW_MINUTES: 60,
      TIMER_CALLBACK_BODY_MAX_BYTES: 65_536,
      TIMER_BODY_LIMIT_BYTES: 262_144,
    });
    expect(c.TIMER_ADMIN_TOKEN).toBeUndefined();
    expect(API_VARIABLES).toEqual(expect.arrayContaining(['TIMER_ADMIN_TOKEN', 'TIMER_AUTH_DISABLED', 'TIMER_AUTH_FAILURES_PER_MIN', 'TIMER_RATE_LIMIT_PER_SEC', 'TIMER_WINDOW_MINUTES']));
  });

  it('keeps auth on when TIMER_AUTH_DISABLED is set to "false" (and reads every boolean from its string)', () => {
    const off = loadConfig(ApiEnv, { TIMER_AUTH_DISABLED: 'false', TIMER_CALLBACK_ALLOW_PRIVATE: 'false' });
    expect(off.TIMER_AUTH_DISABLED).toBe(false);
    expect(off.TIMER_CALLBACK_ALLOW_PRIVATE).toBe(false);
    const on = loadConfig(ApiEnv, { TIMER_AUTH_DISABLED: 'TRUE', TIMER_CALLBACK_ALLOW_PRIVATE: '1' });
    expect(on.TIMER_AUTH_DISABLED).toBe(true);
    expect(on.TIMER_CALLBACK_ALLOW_PRIVATE).toBe(true);
  });

  it('reads TIMER_AUTH_FAILURES_PER_MIN, 0 turning the limit off, and refuses what is not a count', () => {
    expect(loadConfig(ApiEnv, { TIMER_AUTH_FAILURES_PER_MIN: '0' }).TIMER_AUTH_FAILURES_PER_MIN).toBe(0);
    expect(loadConfig(ApiEnv, { TIMER_AUTH_FAILURES_PER_MIN: '5' }).TIMER_AUTH_FAILURES_PER_MIN).toBe(5);
    for (const bad of ['-1', '1.5', 'many']) expect(() => loadConfig(ApiEnv, { TIMER_AUTH_FAILURES_PER_MIN: bad })).toThrow(/TIMER_AUTH_FAILURES_PER_MIN/);
  });

  it('stops the boot naming every bad variable', () => {
    const role = loadRoleConfig('api', {});
    try {
      AppModule.register(role, { TIMER_ADMIN_TOKEN: 'short', TIMER_RATE_LIMIT_PER_SEC: 'lots', TIMER_AUTH_FAILURES_PER_MIN: '-1', TIMER_WINDOW_MINUTES: '0', TIMER_AUTH_DISABLED: 'true' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const names = [...new Set((e as ConfigError).problems.map((p) => p.split(':')[0]))].sort();
      expect(names).toEqual(['TIMER_ADMIN_TOKEN', 'TIMER_AUTH_FAILURES_PER_MIN', 'TIMER_RATE_LIMIT_PER_SEC', 'TIMER_WINDOW_MINUTES']);
    }
  });
});

describe('ApiConfig.load', () => {
  it('reads TIMER_CALLBACK_TIMEOUT_MAX_MS (default 30000) and names it among every bad variable', () => {
    expect(ApiConfig.load({}).callbackTimeoutMaxMs).toBe(30_000);
    expect(ApiConfig.load({ TIMER_CALLBACK_TIMEOUT_MAX_MS: '60000' }).callbackTimeoutMaxMs).toBe(60_000);
    expect(API_VARIABLES).toContain('TIMER_CALLBACK_TIMEOUT_MAX_MS');
    try {
      ApiConfig.load({ TIMER_CALLBACK_TIMEOUT_MAX_MS: '500', TIMER_RATE_LIMIT_PER_SEC: 'lots' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect([...new Set((e as ConfigError).problems.map((p) => p.split(':')[0]))].sort()).toEqual(['TIMER_CALLBACK_TIMEOUT_MAX_MS', 'TIMER_RATE_LIMIT_PER_SEC']);
    }
  });
});

describe('API_VARIABLES', () => {
  it('are known to every role, so a shared environment does not read as typos', () => {
    expect(KNOWN_VARIABLES).toEqual(expect.arrayContaining([...API_VARIABLES]));
  });
});

describe('TIMER_TRUSTED_PROXIES and the HTTP timeouts', () => {
  it('reads a list of addresses and CIDRs, empty by default', () => {
    expect(ApiConfig.load({}).trustedProxies).toEqual([]);
    expect(ApiConfig.load({ TIMER_TRUSTED_PROXIES: ' 10.0.0.0/8, 127.0.0.1 ,fd00::/8' }).trustedProxies).toEqual(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);
  });

  it.each(['10.0.0.0/33', 'ingress', '10.0.0.0/8/1', 'fd00::/129', '10.0.0.0/x'])('stops the boot on %j, naming the variable', (bad) => {
    expect(() => ApiConfig.load({ TIMER_TRUSTED_PROXIES: bad })).toThrow(/TIMER_TRUSTED_PROXIES: must be a comma-separated list/);
  });

  it('has timeouts of seconds by default and refuses a headers timeout longer than the request timeout', () => {
    expect(ApiConfig.load({}).httpTimeouts).toEqual({ headersMs: 10_000, requestMs: 15_000, keepAliveMs: 5_000 });
    expect(() => ApiConfig.load({ TIMER_HTTP_HEADERS_TIMEOUT_MS: '20000' })).toThrow(/TIMER_HTTP_HEADERS_TIMEOUT_MS: must not exceed TIMER_HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => ApiConfig.load({ TIMER_HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' })).toThrow(/TIMER_HTTP_KEEP_ALIVE_TIMEOUT_MS/);
  });
});
