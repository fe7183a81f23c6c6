import { IsBoolean, IsIn, IsInt, IsNumber, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { CallbackTimeoutMaxEnv, ConfigError, EnvBoolean, loadConfig } from '@timer/platform';

/**
 * Settings of the executor role only (the shared ones are in `@timer/platform`). Validated at boot by
 * `AppModule.register`, so a bad value stops the process with a message naming the variable.
 */
// Explicit property types: `loadConfig` converts strings by the emitted design type, which a
// transpile-only build (ts-jest isolatedModules) emits only for annotated properties.
export class ExecutorEnv extends CallbackTimeoutMaxEnv {
  /**
   * Fires worked on at the same time per lane (due fires, retries; catch-up a tenth: FireLanes), and
   * task messages handled at once per topic. A fire holds its slot from its claim, made shortly before
   * run_at, to its recorded outcome, so this bounds how many fires of one instant are claimed before it:
   * the rest are claimed, called and recorded in rounds during it, each later than the last
   * (docs/benchmarks.md, "Measurements behind the code").
   */
  @IsInt() @Min(1) @Max(10_000)
  TIMER_EXECUTOR_CONCURRENCY: number = 5_000;

  /** How long a claim holds a fire; after it another executor may take the fire over (crash recovery). */
  @IsInt() @Min(10_000) @Max(3_600_000)
  TIMER_EXECUTOR_CLAIM_LEASE_MS: number = 60_000;

  /**
   * Where a scheduled first attempt delivered on time is claimed: `redis` (a key per fire; the outcome is
   * then the fire's only MySQL write, fenced on the row still being pending) or `mysql` (an UPDATE of the
   * row, as retries and late fires always are). docs/pipeline.md.
   */
  @IsIn(['redis', 'mysql'])
  TIMER_CLAIM_STORE: 'redis' | 'mysql' = 'redis';

  /** How long a cached timer definition is used: a disable or delete stops fires within this. */
  @IsInt() @Min(0) @Max(600_000)
  TIMER_EXECUTOR_CACHE_TTL_MS: number = 2_000;

  /** step2: the look-ahead whose timers' definitions are prefetched (0 = no prefetch). */
  @IsInt() @Min(0) @Max(3_600_000)
  TIMER_EXECUTOR_PREFETCH_MS: number = 60_000;

  /** Largest number of definitions one prefetch loads. */
  @IsInt() @Min(1) @Max(1_000_000)
  TIMER_EXECUTOR_PREFETCH_LIMIT: number = 10_000;

  /** Outcome rows wait at most this long to be written together (batch, up to 500 rows per statement). */
  @IsInt() @Min(0) @Max(10_000)
  TIMER_EXECUTOR_FLUSH_MS: number = 50;

  /** An early message waits in process until run_at when it is at most this early; else it is re-published for run_at. */
  @IsInt() @Min(0) @Max(60_000)
  TIMER_EXECUTOR_MAX_EARLY_WAIT_MS: number = 5_000;

  /** fire_late policy: a fire is still delivered when at most this late, else recorded missed. */
  @IsInt() @Min(0) @Max(7 * 24 * 3_600_000)
  TIMER_MISFIRE_WINDOW_MS: number = 3_600_000;

  /** Time a callback may take (connect, headers, body), unless its timer sets `notifyHTTPParam.timeoutMs`. */
  @IsInt() @Min(100) @Max(120_000)
  TIMER_CALLBACK_TIMEOUT_MS: number = 5_000;

  /** Keep-alive connections per callback origin: a burst of fires to one host beyond it queues. */
  @IsInt() @Min(1) @Max(4096)
  TIMER_CALLBACK_CONNECTIONS_PER_ORIGIN: number = 256;

  /** One log line per due instant on when its fires were claimed, woke and called, and what else ran then (InstantDiagnostics). */
  @EnvBoolean() @IsBoolean()
  TIMER_EXECUTOR_DIAG_INSTANTS: boolean = false;

  /** Allow callbacks to loopback/private/link-local addresses (tests, local demos). */
  @EnvBoolean() @IsBoolean()
  TIMER_CALLBACK_ALLOW_PRIVATE: boolean = false;

  /** Calls to one origin (scheme://host:port) at a time per executor; more wait (bounded), then are deferred (`origin_busy`). */
  @IsInt() @Min(1) @Max(10_000)
  TIMER_ORIGIN_CONCURRENCY: number = 256;

  /** Consecutive failures (no answer, timeout, 5xx) of one origin that open its circuit. */
  @IsInt() @Min(1) @Max(1_000)
  TIMER_CIRCUIT_FAILURES: number = 5;

  /** How long an open circuit sends nothing to its origin before one probe is let through. */
  @IsInt() @Min(1_000) @Max(3_600_000)
  TIMER_CIRCUIT_OPEN_MS: number = 30_000;

  /** The longest `Retry-After` (429/503) honoured: a longer one is cut to this. */
  @IsInt() @Min(0) @Max(86_400_000)
  TIMER_RETRY_AFTER_MAX_MS: number = 600_000;

  /**
   * Response headers an attempt's record keeps (`response.headers`): comma-separated names, any case;
   * `none` keeps none (an empty value reads as unset, as for every variable; docs/callback-answers.md).
   */
  @IsString() @MaxLength(1_024)
  @Matches(/^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+\s*(,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*)*)?$/, { message: 'must be a comma-separated list of header names' })
  TIMER_RECORD_HEADERS: string = 'content-type';

  /** Bytes of the response body an attempt's record keeps (`response.body`); 0 keeps none. */
  @IsInt() @Min(0) @Max(65_536)
  TIMER_RECORD_BODY_BYTES: number = 4_096;

  /**
   * A bloom filter per slice of the settled fires (docs/scaling.md, "Bloom filter per slice"): added to
   * once an outcome batch is written, asked before a possible duplicate's claim and an over-share
   * message's settled check. Off by default: what it saves was measured smaller than what it costs.
   */
  @EnvBoolean() @IsBoolean()
  TIMER_EXECUTOR_BLOOM: boolean = false;

  /** The false-positive rate each slice's filter is sized for (bits a fire: 1.44 log2(1/rate)). */
  @IsNumber() @Min(0.0001) @Max(0.5)
  TIMER_EXECUTOR_BLOOM_FP_RATE: number = 0.01;

  /** Scavenge the young generation in the middle of each second, between the instants' bursts (IdleScavenge). */
  @EnvBoolean() @IsBoolean()
  TIMER_EXECUTOR_IDLE_SCAVENGE: boolean = true;
}

/** The executor's variable names, for `bootstrapRole({ extraVariables })`. */
export const EXECUTOR_VARIABLES: readonly string[] = Object.keys(new ExecutorEnv());

/**
 * What the outcome recorder (`fire/outcome-recorder.service.ts`) may sleep between the attempts of a
 * failed batch write: 6 attempts, 200 ms to 3.2 s apart. The spec checks it against the recorder.
 */
export const OUTCOME_WRITE_RETRY_BACKOFF_MS = 6_200;

/** Room for the outcome write statements themselves (up to 3 of them, see above). */
const OUTCOME_WRITE_MARGIN_MS = 5_000;

/** The longest one held delivery may take: wait for run_at, the longest callback, the outcome's flush, write retries and writes. */
function heldDeliveryMs(e: ExecutorEnv): number {
  const longestCall = Math.max(e.TIMER_CALLBACK_TIMEOUT_MS, e.TIMER_CALLBACK_TIMEOUT_MAX_MS);
  return e.TIMER_EXECUTOR_MAX_EARLY_WAIT_MS + longestCall + e.TIMER_EXECUTOR_FLUSH_MS + OUTCOME_WRITE_RETRY_BACKOFF_MS + OUTCOME_WRITE_MARGIN_MS;
}

/** The validated executor settings, injectable by class. */
export class ExecutorConfig {
  constructor(readonly env: ExecutorEnv) {}

  /** Loads and cross-checks the settings; throws `ConfigError` naming the variables. */
  static load(env?: NodeJS.ProcessEnv): ExecutorConfig {
    const e = loadConfig(ExecutorEnv, env);
    // The lease must outlast one held delivery: waiting for run_at, the callback, then its outcome
    // waiting for the batch (flush interval), the write retries' backoff, and the write statements.
    // One lease for every fire, checked here against the longest callback any fire may make (the
    // global timeout or a timer's own, capped at TIMER_CALLBACK_TIMEOUT_MAX_MS), rather than a lease
    // per fire: the claim is taken before the definition is read, and a long lease costs nothing on
    // failover (a dead holder's fires are taken over through its liveness key, not its lease).
    const longestCall = Math.max(e.TIMER_CALLBACK_TIMEOUT_MS, e.TIMER_CALLBACK_TIMEOUT_MAX_MS);
    const callName = e.TIMER_CALLBACK_TIMEOUT_MAX_MS >= e.TIMER_CALLBACK_TIMEOUT_MS ? 'TIMER_CALLBACK_TIMEOUT_MAX_MS' : 'TIMER_CALLBACK_TIMEOUT_MS';
    const minLease = heldDeliveryMs(e);
    if (e.TIMER_EXECUTOR_CLAIM_LEASE_MS < minLease) {
      throw new ConfigError([
        `TIMER_EXECUTOR_CLAIM_LEASE_MS: must be at least TIMER_EXECUTOR_MAX_EARLY_WAIT_MS (${e.TIMER_EXECUTOR_MAX_EARLY_WAIT_MS}) + ` +
          `${callName} (${longestCall}) + TIMER_EXECUTOR_FLUSH_MS (${e.TIMER_EXECUTOR_FLUSH_MS}) + ` +
          `the outcome write retries' backoff (${OUTCOME_WRITE_RETRY_BACKOFF_MS}) + ${OUTCOME_WRITE_MARGIN_MS} for the outcome writes = ${minLease} ` +
          `(got ${e.TIMER_EXECUTOR_CLAIM_LEASE_MS})`,
      ]);
    }
    return new ExecutorConfig(e);
  }

  get concurrency(): number {
    return this.env.TIMER_EXECUTOR_CONCURRENCY;
  }
  get leaseMs(): number {
    return this.env.TIMER_EXECUTOR_CLAIM_LEASE_MS;
  }
  get claimStore(): 'redis' | 'mysql' {
    return this.env.TIMER_CLAIM_STORE;
  }
  get cacheTtlMs(): number {
    return this.env.TIMER_EXECUTOR_CACHE_TTL_MS;
  }
  get prefetchMs(): number {
    return this.env.TIMER_EXECUTOR_PREFETCH_MS;
  }
  get prefetchLimit(): number {
    return this.env.TIMER_EXECUTOR_PREFETCH_LIMIT;
  }
  get idleScavenge(): boolean {
    return this.env.TIMER_EXECUTOR_IDLE_SCAVENGE;
  }
  get flushMs(): number {
    return this.env.TIMER_EXECUTOR_FLUSH_MS;
  }
  get maxEarlyWaitMs(): number {
    return this.env.TIMER_EXECUTOR_MAX_EARLY_WAIT_MS;
  }
  get misfireWindowMs(): number {
    return this.env.TIMER_MISFIRE_WINDOW_MS;
  }
  get callbackConnectionsPerOrigin(): number {
    return this.env.TIMER_CALLBACK_CONNECTIONS_PER_ORIGIN;
  }
  get callbackTimeoutMs(): number {
    return this.env.TIMER_CALLBACK_TIMEOUT_MS;
  }
  get callbackTimeoutMaxMs(): number {
    return this.env.TIMER_CALLBACK_TIMEOUT_MAX_MS;
  }
  get diagInstants(): boolean {
    return this.env.TIMER_EXECUTOR_DIAG_INSTANTS;
  }
  /** Lower-case response header names the records keep. */
  get recordHeaders(): string[] {
    const names = this.env.TIMER_RECORD_HEADERS.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0);
    return names.length === 1 && names[0] === 'none' ? [] : names;
  }
  /** The settled fires' bloom filter's false-positive rate, or null when the filter is off. */
  get bloomFalsePositiveRate(): number | null {
    return this.env.TIMER_EXECUTOR_BLOOM ? this.env.TIMER_EXECUTOR_BLOOM_FP_RATE : null;
  }
  get recordBodyBytes(): number {
    return this.env.TIMER_RECORD_BODY_BYTES;
  }
  get allowPrivate(): boolean {
    return this.env.TIMER_CALLBACK_ALLOW_PRIVATE;
  }
  get originConcurrency(): number {
    return this.env.TIMER_ORIGIN_CONCURRENCY;
  }
  get circuitFailures(): number {
    return this.env.TIMER_CIRCUIT_FAILURES;
  }
  get circuitOpenMs(): number {
    return this.env.TIMER_CIRCUIT_OPEN_MS;
  }
  get retryAfterMaxMs(): number {
    return this.env.TIMER_RETRY_AFTER_MAX_MS;
  }
  /**
   * How long a claimed fire may wait for a slot of its origin: at most 5 s, and never more than the
   * lease has to spare beyond one held delivery (the boot check), so the wait cannot outlast the claim.
   */
  get originMaxWaitMs(): number {
    return Math.max(0, Math.min(5_000, this.env.TIMER_EXECUTOR_CLAIM_LEASE_MS - heldDeliveryMs(this.env)));
  }
}
