/**
 * TLS modes `TIMER_MYSQL_URL` accepts as `?ssl-mode=` (the MySQL client's names, any case). Unlike
 * the MySQL client, the service never encrypts without verifying: `REQUIRED` checks the server's
 * certificate chain and host name as `VERIFY_IDENTITY` does; `VERIFY_CA` checks the chain only.
 */
export const MYSQL_SSL_MODES = ['DISABLED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'] as const;
export type MysqlSslMode = (typeof MYSQL_SSL_MODES)[number];

/** The parts of a `mysql://user:password@host:port/database?ssl-mode=...` URL. */
export interface MysqlUrl {
  host: string;
  port: number;
  username: string;
  password: string;
  database?: string;
  sslMode?: MysqlSslMode;
}

/** What the connection does about TLS, from the URL's `ssl-mode` and `TIMER_MYSQL_TLS_CA_FILE`. */
export interface MysqlTlsPolicy {
  enabled: boolean;
  /** Check the server's host name against its certificate (chain is always checked when enabled). */
  verifyIdentity: boolean;
}

/** The only query parameter the URL takes; others would be dropped silently, so they are refused. */
const SSL_MODE_PARAM = 'ssl-mode';

/**
 * Parses `TIMER_MYSQL_URL`. Throws an Error whose message never contains the password, so a bad URL
 * can be reported as it is.
 */
export function parseMysqlUrl(url: string): MysqlUrl {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`not a URL: ${maskUrlPassword(url)}`);
  }
  if (u.protocol !== 'mysql:') throw new Error(`the scheme must be mysql://, got ${u.protocol}//`);
  if (!u.hostname) throw new Error('no host');
  let sslMode: MysqlSslMode | undefined;
  for (const [key, value] of u.searchParams) {
    if (key.toLowerCase() !== SSL_MODE_PARAM) {
      throw new Error(`unsupported option ${JSON.stringify(key)} (the URL takes only ?ssl-mode=; a CA file is set with TIMER_MYSQL_TLS_CA_FILE)`);
    }
    const mode = value.toUpperCase();
    if (!(MYSQL_SSL_MODES as readonly string[]).includes(mode)) {
      throw new Error(`ssl-mode must be one of ${MYSQL_SSL_MODES.join(', ')}, got ${JSON.stringify(value)}`);
    }
    sslMode = mode as MysqlSslMode;
  }
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port ? Number(u.port) : 3306,
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: database || undefined,
    sslMode,
  };
}

/**
 * TLS from the URL's mode and whether a CA file is set: a CA file alone means `VERIFY_IDENTITY`;
 * `DISABLED` with a CA file is a contradiction (thrown); no mode and no CA file is plain TCP, as before.
 */
export function mysqlTlsPolicy(sslMode: MysqlSslMode | undefined, hasCaFile: boolean): MysqlTlsPolicy {
  if (sslMode === 'DISABLED') {
    if (hasCaFile) throw new Error('ssl-mode=DISABLED contradicts TIMER_MYSQL_TLS_CA_FILE');
    return { enabled: false, verifyIdentity: false };
  }
  if (!sslMode) return hasCaFile ? { enabled: true, verifyIdentity: true } : { enabled: false, verifyIdentity: false };
  return { enabled: true, verifyIdentity: sslMode !== 'VERIFY_CA' };
}

/**
 * `scheme://user:secret@host/...` with the password replaced by `***`. Everything between `//` and
 * the last `@` is the user info, so a password with an unescaped `@` or `/` is masked whole.
 */
export function maskUrlPassword(value: string): string {
  const start = value.indexOf('://');
  if (start < 0) return value;
  const at = value.lastIndexOf('@');
  if (at < start) return value;
  const userInfo = value.slice(start + 3, at);
  const colon = userInfo.indexOf(':');
  if (colon < 0) return value;
  return `${value.slice(0, start + 3)}${userInfo.slice(0, colon)}:***${value.slice(at)}`;
}
