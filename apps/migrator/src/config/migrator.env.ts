import { MINUTE_MS } from '@timer/contracts';
import { EnvBoolean, WindowEnv, windowMsOf } from '@timer/platform';
import { IsBoolean, IsInt, Max, Min } from 'class-validator';

/**
 * Settings of the migrator role only (the shared ones are in `@timer/platform`). Validated at boot by
 * `AppModule.register`, so a bad value stops the process with a message naming the variable.
 */
// Explicit property types: `loadConfig` converts strings by the emitted design type.
export class MigratorEnv extends WindowEnv {
  /** Period of the migrator's tick (it also runs once at start-up); well below the api's TIMER_PRECREATE_SECONDS, whose rest its top-up writes. */
  @IsInt() @Min(1000) @Max(3_600_000)
  TIMER_MIGRATOR_TICK_MS: number = 10_000;

  /** Timers read per keyset page; each page is inserted and indexed before the next is read. */
  @IsInt() @Min(1) @Max(10_000)
  TIMER_MIGRATOR_PAGE_SIZE: number = 500;

  /** Lease of the per-window lock `migrate:<windowStart>`; extended every third of it while working. */
  @IsInt() @Min(3000) @Max(3_600_000)
  TIMER_MIGRATOR_LOCK_LEASE_MS: number = 60_000;

  /**
   * How far back the migrator still creates fires after downtime. Keep it equal to the scheduler's
   * TIMER_SCHEDULER_LOOKBACK_MINUTES: older fires would never be walked by a trigger.
   */
  @IsInt() @Min(0) @Max(10_080)
  TIMER_MIGRATOR_CATCHUP_MINUTES: number = 60;

  /**
   * A window with more enabled timers than this is split into ranges of this many timers, published
   * on `timer-migrate-ranges` and expanded by every migrator replica; 0 = never split.
   */
  @IsInt() @Min(0) @Max(100_000_000)
  TIMER_MIGRATOR_RANGE_TIMERS: number = 50_000;

  /**
   * The executors' lag (how late their calls start, reported every second) above which an expansion
   * backs off: smaller chunks and pauses, spread over its slack before the deadline; 0 = never pace.
   */
  @IsInt() @Min(0) @Max(600_000)
  TIMER_MIGRATOR_PACE_LAG_MS: number = 100;

  /** A paced window is written at least this long before its first fire (pacing never goes past it). */
  @IsInt() @Min(0) @Max(3_600_000)
  TIMER_MIGRATOR_PACE_LEAD_MS: number = 30_000;

  /**
   * Longest the windows of one tick may be stretched by pacing, from the tick's start: the top-up of
   * timers enabled meanwhile waits for them, so keep it well below TIMER_PRECREATE_SECONDS minus the tick.
   */
  @IsInt() @Min(0) @Max(3_600_000)
  TIMER_MIGRATOR_PACE_MAX_MS: number = 30_000;

  /** Longest single pause between two chunks of a paced expansion. */
  @IsInt() @Min(10) @Max(60_000)
  TIMER_MIGRATOR_PACE_MAX_PAUSE_MS: number = 1_000;

  /**
   * Where the quiet part of each second begins, in ms past the whole second: a paced chunk of at least
   * 1,000 rows runs inside that part (the executors call whole-second fires from x.000 and claim the
   * next ones from about x.780), unless the deadline is near.
   */
  @IsInt() @Min(0) @Max(999)
  TIMER_MIGRATOR_PACE_QUIET_AT_MS: number = 250;

  /** Length of the quiet part of each second (TIMER_MIGRATOR_PACE_QUIET_AT_MS); 0 = chunks run at any time. */
  @IsInt() @Min(0) @Max(1000)
  TIMER_MIGRATOR_PACE_QUIET_FOR_MS: number = 500;

  /** Finished fire records older than this many days are deleted (hourly, in batches); 0 = keep all. */
  @IsInt() @Min(0) @Max(36_500)
  TIMER_TASK_RETENTION_DAYS: number = 30;

  /** How often the reconciler looks for fires past their time that nothing is working on. */
  @IsInt() @Min(500) @Max(600_000)
  TIMER_RECONCILER_INTERVAL_MS: number = 5_000;

  /**
   * How long past its run_at a pending fire may stay before the reconciler publishes it again: longer
   * than the pipeline's lag under load, so fires merely queued at the executor are left alone.
   */
  @IsInt() @Min(1_000) @Max(3_600_000)
  TIMER_RECONCILER_GRACE_MS: number = 30_000;

  /** Most overdue fires one reconciler pass publishes (the catch-up is paced, on-time fires go first). */
  @IsInt() @Min(1) @Max(100_000)
  TIMER_RECONCILER_BATCH: number = 1_000;

  /** Failure webhooks may reach loopback and private addresses (as callbacks may, in the executor and api). */
  @EnvBoolean() @IsBoolean()
  TIMER_CALLBACK_ALLOW_PRIVATE: boolean = false;
}

/** The migrator's variable names, for `bootstrapRole({ extraVariables })`. */
export const MIGRATOR_VARIABLES: readonly string[] = Object.keys(new MigratorEnv());

/** The pacing of expansions (docs/scaling.md, "Expansion beside delivery"). */
export interface PaceConfig {
  lagMs: number;
  leadMs: number;
  maxSpanMs: number;
  maxPauseMs: number;
  /** The quiet part of each second: from `quietAtMs` past it, for `quietForMs` (0: none). */
  quietAtMs: number;
  quietForMs: number;
}

/** The validated migrator settings, injectable by class. */
export class MigratorConfig {
  constructor(readonly env: MigratorEnv) {}

  get windowMs(): number {
    return windowMsOf(this.env);
  }
  get tickMs(): number {
    return this.env.TIMER_MIGRATOR_TICK_MS;
  }
  get pageSize(): number {
    return this.env.TIMER_MIGRATOR_PAGE_SIZE;
  }
  get lockLeaseMs(): number {
    return this.env.TIMER_MIGRATOR_LOCK_LEASE_MS;
  }
  get retentionDays(): number {
    return this.env.TIMER_TASK_RETENTION_DAYS;
  }
  get rangeTimers(): number {
    return this.env.TIMER_MIGRATOR_RANGE_TIMERS;
  }
  get pace(): PaceConfig {
    return {
      lagMs: this.env.TIMER_MIGRATOR_PACE_LAG_MS,
      leadMs: this.env.TIMER_MIGRATOR_PACE_LEAD_MS,
      maxSpanMs: this.env.TIMER_MIGRATOR_PACE_MAX_MS,
      maxPauseMs: this.env.TIMER_MIGRATOR_PACE_MAX_PAUSE_MS,
      quietAtMs: this.env.TIMER_MIGRATOR_PACE_QUIET_AT_MS,
      quietForMs: this.env.TIMER_MIGRATOR_PACE_QUIET_FOR_MS,
    };
  }
  get reconcileIntervalMs(): number {
    return this.env.TIMER_RECONCILER_INTERVAL_MS;
  }
  get reconcileGraceMs(): number {
    return this.env.TIMER_RECONCILER_GRACE_MS;
  }
  get reconcileBatch(): number {
    return this.env.TIMER_RECONCILER_BATCH;
  }
  get catchUpMs(): number {
    return this.env.TIMER_MIGRATOR_CATCHUP_MINUTES * MINUTE_MS;
  }
  get allowPrivateWebhooks(): boolean {
    return this.env.TIMER_CALLBACK_ALLOW_PRIVATE;
  }
}
