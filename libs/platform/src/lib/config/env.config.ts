import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { DEFAULT_WINDOW_MINUTES, MAX_BUCKETS, MINUTE_MS } from '@timer/contracts';
import { IsMysqlUrl, IsReadableFile, NotBelow } from './env-validators';

/**
 * A boolean variable: `1/true/yes/on` (any case) is true, anything else false. Reads the raw string:
 * implicit conversion has already turned every non-empty string, "false" included, into `true` by
 * the time `value` arrives, so `TIMER_AUTH_DISABLED=false` would otherwise switch auth off.
 */
export function EnvBoolean(): PropertyDecorator {
  return Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => {
    const raw = obj[key];
    return typeof raw === 'string' ? ['1', 'true', 'yes', 'on'].includes(raw.toLowerCase()) : raw;
  });
}

/** `name=value[,name=value...]`, as OTEL_EXPORTER_OTLP_HEADERS. */
const OTLP_HEADERS = /^\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*=[^,]*(,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*=[^,]*)*$/;

/** The pairs of a validated `TIMER_OTLP_HEADERS` (values URL-decoded). */
export function otlpHeadersOf(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of raw ? raw.split(',') : []) {
    const eq = pair.indexOf('=');
    headers[pair.slice(0, eq).trim()] = decodeOr(pair.slice(eq + 1).trim());
  }
  return headers;
}

function decodeOr(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value; // a lone `%` is meant literally
  }
}

// Every property carries an explicit type: class-transformer converts "20" to 20 by the design
// type TypeScript emits, and emits none for a property whose type is only inferred.

/**
 * How a role logs. Read on its own before the rest of the config (`bootLogSettings`), so that even a
 * configuration error is reported in the chosen format.
 */
export class LogEnv {
  @IsIn(['debug', 'verbose', 'log', 'warn', 'error'])
  TIMER_LOG_LEVEL: 'debug' | 'verbose' | 'log' | 'warn' | 'error' = 'log';

  @IsIn(['text', 'json'])
  TIMER_LOG_FORMAT: 'text' | 'json' = 'text';
}

/** Settings every role reads: its HTTP listener (health, metrics, and the API for the api role) and logs. */
export class RoleEnv extends LogEnv {
  /** Port of the role's HTTP server; defaults per role (api 8092 ... executor 8096). */
  @IsOptional() @IsInt() @Min(1) @Max(65535)
  TIMER_HTTP_PORT?: number = undefined;

  /** Address to bind; loopback by default, `0.0.0.0` in containers. */
  @IsString()
  TIMER_HTTP_HOST: string = '127.0.0.1';

  /** Time a SIGTERM may spend draining in-flight work before the process exits anyway. */
  @IsInt() @Min(0) @Max(600_000)
  TIMER_SHUTDOWN_TIMEOUT_MS: number = 25_000;

  /**
   * OTLP/HTTP collector (base URL, e.g. `http://127.0.0.1:4318`; `/v1/traces` is appended) the role
   * exports its fire traces to. Unset: tracing is off and nothing of OpenTelemetry is loaded.
   */
  @IsOptional() @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  TIMER_OTLP_ENDPOINT?: string = undefined;

  /** Headers sent with every export (`name=value,name2=value2`, values URL-encoded), e.g. a collector's token. */
  @IsOptional() @Matches(OTLP_HEADERS, { message: 'TIMER_OTLP_HEADERS must be name=value pairs separated by commas' })
  TIMER_OTLP_HEADERS?: string = undefined;
}

export class MysqlEnv {
  /** `mysql://user:password@host:port/database`, optionally `?ssl-mode=` (`parseMysqlUrl`). */
  @IsMysqlUrl()
  TIMER_MYSQL_URL: string = 'mysql://timer:timer@127.0.0.1:3306/timer';

  @IsInt() @Min(1) @Max(1000)
  TIMER_MYSQL_POOL_SIZE: number = 20;

  /** PEM file of the CA that signed the MySQL server's certificate: connections use TLS and verify it. */
  @IsOptional() @IsReadableFile()
  TIMER_MYSQL_TLS_CA_FILE?: string = undefined;

  /** Statements slower than this are logged as a warning (without their parameters); 0 turns it off. */
  @IsInt() @Min(0) @Max(3_600_000)
  TIMER_MYSQL_SLOW_QUERY_MS: number = 1_000;

  /**
   * Key (32 bytes, base64) that seals the apps' callback signing secrets in MySQL (AES-256-GCM). Every
   * role that reads or writes them needs the same key; unset, secrets are stored as plain text.
   */
  @IsOptional() @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'TIMER_SECRETS_KEY must be 32 random bytes in base64 (openssl rand -base64 32)' })
  TIMER_SECRETS_KEY?: string = undefined;
}

export class RedisEnv {
  @IsUrl({ protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true })
  TIMER_REDIS_URL: string = 'redis://127.0.0.1:6379/0';

  /** Prefix of every key the service writes, so it can share a Redis with others. */
  @Matches(/^[A-Za-z0-9:_-]{1,32}$/)
  TIMER_REDIS_KEY_PREFIX: string = 'timer:';

  /**
   * Buckets (slices) of a minute: the count recorded for a minute nobody recorded yet, and the fewest
   * the migrator records. Every role that may record a minute's count reads the same value.
   */
  @IsInt() @Min(1) @Max(MAX_BUCKETS)
  TIMER_SLICE_BUCKETS: number = 10;

  /** The migrator records one bucket more than `TIMER_SLICE_BUCKETS` per this many fires of the minute; 0 = never more. */
  @IsInt() @Min(0) @Max(100_000_000)
  TIMER_SLICE_BUCKET_FIRES: number = 200;

  /**
   * The most buckets the migrator records for a minute, however many fires it has. Each bucket is a
   * slice one trigger slot walks for the whole minute, so the live triggers' slots bound it further
   * (docs/scaling.md, "Buckets per minute"); `TIMER_SLICE_BUCKETS` here keeps every minute at the default count.
   */
  @IsInt() @Min(1) @Max(MAX_BUCKETS) @NotBelow('TIMER_SLICE_BUCKETS')
  TIMER_SLICE_BUCKETS_MAX: number = 64;
}

export class PulsarEnv {
  /** Broker web service URL (admin REST and WebSocket API). */
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  TIMER_PULSAR_URL: string = 'http://127.0.0.1:8080';

  @IsOptional() @IsString()
  TIMER_PULSAR_TOKEN?: string = undefined;

  @Matches(/^[A-Za-z0-9_.-]{1,64}$/)
  TIMER_PULSAR_TENANT: string = 'timer';

  @Matches(/^[A-Za-z0-9_.-]{1,64}$/)
  TIMER_PULSAR_NAMESPACE: string = 'timer';

  /** PEM file of the CA that signed the broker's certificate (https/wss). */
  @IsOptional() @IsString()
  TIMER_PULSAR_TLS_CA_FILE?: string = undefined;

  @EnvBoolean() @IsBoolean()
  TIMER_PULSAR_TLS_ALLOW_INSECURE: boolean = false;

  /** How long a role keeps retrying an unreachable broker at start-up before it exits (ms). */
  @IsInt() @Min(0) @Max(3_600_000)
  TIMER_PULSAR_STARTUP_TIMEOUT_MS: number = 120_000;

  /** Create tenant, namespace, topics and subscriptions at start-up (off where an operator owns them). */
  @EnvBoolean() @IsBoolean()
  TIMER_PULSAR_PROVISION: boolean = true;
}

/**
 * The migrator window (step1), declared once for the two roles that must agree on it: the api
 * pre-creates the fires of the current and the next windows on enable, the migrator expands them.
 * Compose files and the Helm chart give both roles the same value.
 */
export class WindowEnv {
  @IsInt() @Min(1) @Max(1440)
  TIMER_WINDOW_MINUTES: number = DEFAULT_WINDOW_MINUTES;
}

/**
 * The lease of a slice lock, declared once for the scheduler (which takes the lock to offer a slice)
 * and the trigger (which extends it every third of the lease while it walks). A trigger that stops
 * extending (dead, or stalled) loses the slice within one lease: the scheduler offers it again.
 */
export class SliceLeaseEnv {
  @IsInt() @Min(1_000) @Max(600_000)
  TIMER_SLICE_LEASE_MS: number = 5_000;
}

/** The shortest callback timeout a timer may ask for (`notifyHTTPParam.timeoutMs`). */
export const CALLBACK_TIMEOUT_MIN_MS = 1_000;

/**
 * The longest callback timeout a timer may ask for (`notifyHTTPParam.timeoutMs`), declared once for
 * the api (which refuses a longer one) and the executor (whose claim lease must outlast it, checked at
 * boot, and which caps a stored value above it, e.g. after the maximum was lowered).
 */
export class CallbackTimeoutMaxEnv {
  @IsInt() @Min(CALLBACK_TIMEOUT_MIN_MS) @Max(120_000)
  TIMER_CALLBACK_TIMEOUT_MAX_MS: number = 30_000;
}

/** The window length of a validated {@link WindowEnv}, in ms. */
export function windowMsOf(env: WindowEnv): number {
  return env.TIMER_WINDOW_MINUTES * MINUTE_MS;
}
