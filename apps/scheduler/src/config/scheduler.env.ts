import { SliceLeaseEnv } from '@timer/platform';
import { IsInt, Max, Min } from 'class-validator';

/**
 * Settings of the scheduler role only (the shared ones are in `@timer/platform`). Validated at boot by
 * `AppModule.register`, so a bad value stops the process with a message naming the variable.
 */
// Explicit property types: `loadConfig` converts strings by the emitted design type.
export class SchedulerEnv extends SliceLeaseEnv {
  /** Period of the scheduler's tick; at most 1 s so a slice is offered within a second of its minute. */
  @IsInt() @Min(50) @Max(1000)
  TIMER_SCHEDULER_TICK_MS: number = 1000;

  /** How many past minutes are still offered until their slices are marked done (downtime recovery). */
  @IsInt() @Min(1) @Max(1440)
  TIMER_SCHEDULER_LOOKBACK_MINUTES: number = 60;

  /**
   * How long before a minute starts its slices are offered. Offered only once the minute began, the
   * fires of its first second or so would be published after their run_at; the trigger waits for
   * each step of an early slice and extends its lease meanwhile.
   */
  @IsInt() @Min(0) @Max(30_000)
  TIMER_SCHEDULER_LEAD_MS: number = 5_000;

  /**
   * Most slices of past minutes held (offered or being walked) at once. After downtime every past
   * minute of the lookback is open; walking them all at once would take the CPU the current
   * minute's walk needs, so the catch-up goes this many slices at a time, newest first.
   */
  @IsInt() @Min(1) @Max(10_000)
  TIMER_SCHEDULER_CATCHUP_SLICES: number = 8;
}

/** The scheduler's variable names, for `bootstrapRole({ extraVariables })`. */
export const SCHEDULER_VARIABLES: readonly string[] = Object.keys(new SchedulerEnv());

/** The validated scheduler settings, injectable by class. */
export class SchedulerConfig {
  constructor(readonly env: SchedulerEnv) {}

  get tickMs(): number {
    return this.env.TIMER_SCHEDULER_TICK_MS;
  }
  get lookbackMinutes(): number {
    return this.env.TIMER_SCHEDULER_LOOKBACK_MINUTES;
  }
  get leadMs(): number {
    return this.env.TIMER_SCHEDULER_LEAD_MS;
  }
  get catchUpSlices(): number {
    return this.env.TIMER_SCHEDULER_CATCHUP_SLICES;
  }
  get sliceLeaseMs(): number {
    return this.env.TIMER_SLICE_LEASE_MS;
  }
}
