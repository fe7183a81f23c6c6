import { loadConfig } from './load-config';
import { MysqlEnv } from './env.config';
import { maskUrlPassword, mysqlTlsPolicy, parseMysqlUrl } from './mysql-url';

describe('parseMysqlUrl', () => {
  it('reads user, password, host, port and database, decoding escapes', () => {
    expect(parseMysqlUrl('mysql://ti%3Amer:p%40ss%2Fw@db.internal:3307/timer_prod')).toEqual({
      host: 'db.internal',
      port: 3307,
      username: 'ti:mer',
      password: 'p@ss/w',
      database: 'timer_prod',
      sslMode: undefined,
    });
    expect(parseMysqlUrl('mysql://u@[::1]/')).toMatchObject({ host: '::1', port: 3306, password: '', database: undefined });
  });

  it('keeps ssl-mode (any case) and refuses other options instead of dropping them', () => {
    expect(parseMysqlUrl('mysql://u:p@h/db?ssl-mode=verify_ca').sslMode).toBe('VERIFY_CA');
    expect(() => parseMysqlUrl('mysql://u:p@h/db?sslca=/ca.pem')).toThrow(/unsupported option "sslca".*TIMER_MYSQL_TLS_CA_FILE/);
    expect(() => parseMysqlUrl('mysql://u:p@h/db?ssl-mode=PREFERRED')).toThrow(/ssl-mode must be one of DISABLED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY/);
  });

  it('never repeats the password in its errors', () => {
    for (const bad of ['mysql://u:S3cr3tPw@h:notaport/db', 'postgres://u:S3cr3tPw@h/db', 'mysql://u:S3cr3tPw@h/db?x=1']) {
      expect(() => parseMysqlUrl(bad)).toThrow();
      try {
        parseMysqlUrl(bad);
      } catch (e) {
        expect((e as Error).message).not.toContain('S3cr3tPw');
      }
    }
  });
});

describe('mysqlTlsPolicy', () => {
  it('turns TLS on with a CA file or a verifying mode, and never without verifying the chain', () => {
    expect(mysqlTlsPolicy(undefined, false)).toEqual({ enabled: false, verifyIdentity: false });
    expect(mysqlTlsPolicy(undefined, true)).toEqual({ enabled: true, verifyIdentity: true });
    expect(mysqlTlsPolicy('REQUIRED', false)).toEqual({ enabled: true, verifyIdentity: true });
    expect(mysqlTlsPolicy('VERIFY_CA', true)).toEqual({ enabled: true, verifyIdentity: false });
    expect(mysqlTlsPolicy('DISABLED', false)).toEqual({ enabled: false, verifyIdentity: false });
    expect(() => mysqlTlsPolicy('DISABLED', true)).toThrow(/contradicts TIMER_MYSQL_TLS_CA_FILE/);
  });
});

describe('maskUrlPassword', () => {
  it('masks the password, also one with unescaped @ and /', () => {
    expect(maskUrlPassword('mysql://timer:hunter2@db:3306/timer')).toBe('mysql://timer:***@db:3306/timer');
    expect(maskUrlPassword('mysql://timer:a@b/c@db/timer')).toBe('mysql://timer:***@db/timer');
    expect(maskUrlPassword('mysql://timer@db/timer')).toBe('mysql://timer@db/timer');
    expect(maskUrlPassword('not a url')).toBe('not a url');
  });
});

describe('MysqlEnv', () => {
  it('names the variable and masks the password of a bad URL', () => {
    expect(() => loadConfig(MysqlEnv, { TIMER_MYSQL_URL: 'mysql://timer:Hunter2Pw@db/timer?sslmode=on' })).toThrow(/TIMER_MYSQL_URL: .*unsupported option "sslmode".*mysql:\/\/timer:\*\*\*@db/);
    try {
      loadConfig(MysqlEnv, { TIMER_MYSQL_URL: 'mysql://timer:Hunter2Pw@db:port/timer' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect((e as Error).message).toMatch(/TIMER_MYSQL_URL/);
      expect((e as Error).message).not.toContain('Hunter2Pw');
    }
  });

  it('refuses an unreadable CA file at boot, naming the variable', () => {
    expect(() => loadConfig(MysqlEnv, { TIMER_MYSQL_TLS_CA_FILE: '/nonexistent/ca.pem' })).toThrow(/TIMER_MYSQL_TLS_CA_FILE: cannot read \/nonexistent\/ca.pem \(ENOENT\)/);
    expect(() => loadConfig(MysqlEnv, { TIMER_MYSQL_TLS_CA_FILE: '/' })).toThrow(/TIMER_MYSQL_TLS_CA_FILE: \/ is not a file/);
    expect(() => loadConfig(MysqlEnv, { TIMER_MYSQL_TLS_CA_FILE: __filename, TIMER_MYSQL_URL: 'mysql://u@h/db?ssl-mode=DISABLED' })).toThrow(/TIMER_MYSQL_URL: .*contradicts/);
    expect(loadConfig(MysqlEnv, { TIMER_MYSQL_TLS_CA_FILE: __filename }).TIMER_MYSQL_TLS_CA_FILE).toBe(__filename);
  });
});
