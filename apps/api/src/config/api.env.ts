import { CallbackTimeoutMaxEnv, ConfigError, EnvBoolean, loadConfig, WindowEnv, windowMsOf } from '@timer/platform';
import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength, ValidateBy } from 'class-validator';
import { isIP } from 'net';

/** An IPv4/IPv6 address, or one with a `/prefix` (CIDR), as Express's `trust proxy` reads it. */
export function isCidr(entry: string): boolean {
  const [ip, prefix, ...rest] = entry.split('/');
  const family = isIP(ip);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The entries of a comma-separated list, trimmed, blanks dropped. */
export const listOf = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/**
 * Settings of the api role only (the shared ones are in `@timer/platform`). Validated at boot by
 * `AppModule.register`, so a bad value stops the process with a message naming the variable.
 */
// Explicit property types: `loadConfig` converts strings by the emitted design type, which a
// transpile-only build (ts-jest isolatedModules) emits only for annotated properties.
export class ApiEnv extends WindowEnv {
  /**
   * Bearer token that may act on every app (compared in constant time). Unset: only app tokens work
   * (a warning is logged at boot). At least 16 characters so it cannot be guessed quickly.
   */
  @IsOptional() @IsString() @MinLength(16) @MaxLength(512)
  TIMER_ADMIN_TOKEN?: string = undefined;

  /** Runs the API without authentication, as the reference implementation did. */
  @EnvBoolean() @IsBoolean()
  TIMER_AUTH_DISABLED: boolean = false;

  /** Accept callback URLs whose host is a literal loopback/private/link-local IP (tests, local demos). */
  @EnvBoolean() @IsBoolean()
  TIMER_CALLBACK_ALLOW_PRIVATE: boolean = false;

  /** Requests per second per app, shared by all api replicas (Redis fixed one-second window); 0 = off. */
  @IsInt() @Min(0) @Max(1_000_000)
  TIMER_RATE_LIMIT_PER_SEC: number = 500;

  /**
   * Failed authentications (401) per client address per minute, all api replicas together (Redis fixed
   * one-minute window); past it the address gets 429 until the window ends; 0 = off.
   */
  @IsInt() @Min(0) @Max(1_000_000)
  TIMER_AUTH_FAILURES_PER_MIN: number = 20;

  /**
   * Comma-separated CIDRs (or addresses) of the proxies in front of the api (an ingress controller's pod
   * range). X-Forwarded-For is believed only from them, so the failed-authentication limit counts the
   * real client behind them; empty: it is never believed and the TCP peer is the client.
   */
  @IsString()
  @MaxLength(4096)
  @ValidateBy({
    name: 'isCidrList',
    validator: {
      validate: (v: unknown) => typeof v === 'string' && listOf(v).every(isCidr),
      defaultMessage: () => 'must be a comma-separated list of IP addresses or CIDRs (e.g. 10.0.0.0/8,fd00::/8)',
    },
  })
  TIMER_TRUSTED_PROXIES: string = '';

  /** Most time (ms) a client may take to send a request's headers; past it 408 and the connection is closed. */
  @IsInt() @Min(1000) @Max(600_000)
  TIMER_HTTP_HEADERS_TIMEOUT_MS: number = 10_000;

  /** Most time (ms) a client may take to send a whole request, headers and body; past it 408 and the connection is closed. */
  @IsInt() @Min(1000) @Max(3_600_000)
  TIMER_HTTP_REQUEST_TIMEOUT_MS: number = 15_000;

  /** How long (ms) an idle keep-alive connection stays open for its next request. */
  @IsInt() @Min(1000) @Max(600_000)
  TIMER_HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 5_000;

  /** Largest callback body (`notifyHTTPParam.body`, UTF-8 bytes) a timer may carry. */
  @IsInt() @Min(1) @Max(1_048_576)
  TIMER_CALLBACK_BODY_MAX_BYTES: number = 65_536;

  /** Largest JSON request body the API parses; larger requests get 413. */
  @IsInt() @Min(1024) @Max(8_388_608)
  TIMER_BODY_LIMIT_BYTES: number = 262_144;

  /** How many upcoming fire times `GET /api/timer/v1/def` previews. */
  @IsInt() @Min(0) @Max(100)
  TIMER_PREVIEW_COUNT: number = 5;

  /** Most fires one `POST /api/timer/v1/backfill` may create (400 beyond: backfill the range in parts). */
  @IsInt() @Min(1) @Max(1_000_000)
  TIMER_BACKFILL_MAX_FIRES: number = 10_000;

  /** Most timers one `POST /api/timer/v1/def/batch` may create (400 beyond: send several batches). */
  @IsInt() @Min(1) @Max(10_000)
  TIMER_API_BATCH_MAX: number = 500;

  /**
   * How far ahead enable, edit and batch create write a timer's fires; the migrator's next tick writes
   * the rest of its windows. Keep it well above TIMER_MIGRATOR_TICK_MS.
   */
  @IsInt() @Min(10) @Max(86_400)
  TIMER_PRECREATE_SECONDS: number = 60;

  /** The built web console served at /console (relative to the working directory); absent: /console answers 503. */
  @IsString() @MinLength(1) @MaxLength(4096)
  TIMER_CONSOLE_DIR: string = 'dist/apps/console';

  /** Default quota (docs/behaviour.md, "Quotas and admission"): live timers per app (403 past it); 0 = no limit. An app's own quota (PUT /api/app/v1/quota) overrides it. */
  @IsInt() @Min(0) @Max(100_000_000)
  TIMER_QUOTA_MAX_TIMERS: number = 100_000;

  /** Default quota: the app's projected fires in its busiest coming minute (429 past it); 0 = no limit. */
  @IsInt() @Min(0) @Max(1_000_000_000)
  TIMER_QUOTA_MAX_FIRES_PER_MINUTE: number = 120_000;

  /** Default quota: the smallest gap between two fires of a timer's schedule (ms, 403 below it); 0 = no limit. */
  @IsInt() @Min(0) @Max(86_400_000)
  TIMER_QUOTA_MIN_INTERVAL_MS: number = 1_000;

  /** Quota: calendars per app (docs/calendars.md; a create past it: 403); 0 = no limit. */
  @IsInt() @Min(0) @Max(100_000)
  TIMER_QUOTA_MAX_CALENDARS: number = 100;

  /** Quota: entries of one calendar's `exclude.dates` (single days and ranges; past it: 403); 0 = the hard limit of 1000. */
  @IsInt() @Min(0) @Max(1_000)
  TIMER_QUOTA_MAX_CALENDAR_DATES: number = 366;

  /**
   * Fires per second the service delivers; a create, edit or enable that would put any coming second
   * over it answers 429. 0 = no admission control. The default is about the steady rate of a 2-core
   * machine (docs/scaling.md, "Cost per fire, per role").
   */
  @IsInt() @Min(0) @Max(100_000_000)
  TIMER_CAPACITY_FIRES_PER_SEC: number = 3_000;
}

/** The api's variable names, for `bootstrapRole({ extraVariables })` (so they are not reported as typos). */
export const API_VARIABLES: readonly string[] = [...Object.keys(new ApiEnv()), ...Object.keys(new CallbackTimeoutMaxEnv())];

/** The validated api settings, injectable by class. */
export class ApiConfig {
  constructor(
    readonly env: ApiEnv,
    readonly callbackTimeout: CallbackTimeoutMaxEnv = new CallbackTimeoutMaxEnv(),
  ) {}

  /** Validates the api's own variables and the shared ones it reads; one `ConfigError` names every bad one. */
  static load(env?: NodeJS.ProcessEnv): ApiConfig {
    const problems: string[] = [];
    const attempt = <T extends object>(cls: new () => T): T | undefined => {
      try {
        return loadConfig(cls, env);
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems.push(...e.problems);
        return undefined;
      }
    };
    const api = attempt(ApiEnv);
    const timeout = attempt(CallbackTimeoutMaxEnv);
    if (api && api.TIMER_HTTP_HEADERS_TIMEOUT_MS > api.TIMER_HTTP_REQUEST_TIMEOUT_MS) {
      problems.push('TIMER_HTTP_HEADERS_TIMEOUT_MS: must not exceed TIMER_HTTP_REQUEST_TIMEOUT_MS (the request timeout includes the headers)');
    }
    if (!api || !timeout || problems.length > 0) throw new ConfigError(problems);
    return new ApiConfig(api, timeout);
  }

  get adminToken(): string | undefined {
    return this.env.TIMER_ADMIN_TOKEN;
  }
  get authDisabled(): boolean {
    return this.env.TIMER_AUTH_DISABLED;
  }
  get allowPrivateCallbacks(): boolean {
    return this.env.TIMER_CALLBACK_ALLOW_PRIVATE;
  }
  get rateLimitPerSec(): number {
    return this.env.TIMER_RATE_LIMIT_PER_SEC;
  }
  get authFailuresPerMin(): number {
    return this.env.TIMER_AUTH_FAILURES_PER_MIN;
  }
  /** The `trust proxy` list: empty when no proxy is trusted. */
  get trustedProxies(): string[] {
    return listOf(this.env.TIMER_TRUSTED_PROXIES);
  }
  get httpTimeouts(): { headersMs: number; requestMs: number; keepAliveMs: number } {
    return { headersMs: this.env.TIMER_HTTP_HEADERS_TIMEOUT_MS, requestMs: this.env.TIMER_HTTP_REQUEST_TIMEOUT_MS, keepAliveMs: this.env.TIMER_HTTP_KEEP_ALIVE_TIMEOUT_MS };
  }
  get windowMs(): number {
    return windowMsOf(this.env);
  }
  get callbackBodyMaxBytes(): number {
    return this.env.TIMER_CALLBACK_BODY_MAX_BYTES;
  }
  get bodyLimitBytes(): number {
    return this.env.TIMER_BODY_LIMIT_BYTES;
  }
  get previewCount(): number {
    return this.env.TIMER_PREVIEW_COUNT;
  }
  get backfillMaxFires(): number {
    return this.env.TIMER_BACKFILL_MAX_FIRES;
  }
  /** See TIMER_PRECREATE_SECONDS. */
  get precreateMs(): number {
    return this.env.TIMER_PRECREATE_SECONDS * 1000;
  }
  get batchMax(): number {
    return this.env.TIMER_API_BATCH_MAX;
  }
  get consoleDir(): string {
    return this.env.TIMER_CONSOLE_DIR;
  }
  get quotaDefaults(): { maxTimers: number; maxFiresPerMinute: number; minIntervalMs: number } {
    return { maxTimers: this.env.TIMER_QUOTA_MAX_TIMERS, maxFiresPerMinute: this.env.TIMER_QUOTA_MAX_FIRES_PER_MINUTE, minIntervalMs: this.env.TIMER_QUOTA_MIN_INTERVAL_MS };
  }
  /** TIMER_QUOTA_MAX_CALENDARS and TIMER_QUOTA_MAX_CALENDAR_DATES (0: no limit of its own). */
  get calendarQuota(): { maxCalendars: number; maxDates: number } {
    return { maxCalendars: this.env.TIMER_QUOTA_MAX_CALENDARS, maxDates: this.env.TIMER_QUOTA_MAX_CALENDAR_DATES };
  }
  get capacityFiresPerSec(): number {
    return this.env.TIMER_CAPACITY_FIRES_PER_SEC;
  }
  get callbackTimeoutMaxMs(): number {
    return this.callbackTimeout.TIMER_CALLBACK_TIMEOUT_MAX_MS;
  }
}
