import { MAX_TASKS_PER_MESSAGE, NEAR_NOW_MS } from '@timer/contracts';
import { ConfigError, SliceLeaseEnv } from '@timer/platform';
import { IsInt, Max, Min } from 'class-validator';

/**
 * Settings of the trigger role only (the shared ones are in `@timer/platform`). Validated at boot by
 * `AppModule.register`, so a bad value stops the process with a message naming the variable.
 */
// Explicit property types: `loadConfig` converts strings by the emitted design type, which a
// transpile-only build (ts-jest isolatedModules) emits only for annotated properties.
export class TriggerEnv extends SliceLeaseEnv {
  /** Width of one step of the minute walk: each step's fires are read and published together. */
  @IsInt() @Min(10) @Max(60_000)
  TIMER_TRIGGER_STEP_MS: number = 200;

  /** How long before a step starts its task messages are published (absorbs broker and executor queueing). */
  @IsInt() @Min(0) @Max(60_000)
  TIMER_TRIGGER_LEAD_MS: number = 500;

  /** How often a slice re-reads its pending rows from MySQL for the rest of the minute (also at slice start). */
  @IsInt() @Min(100) @Max(600_000)
  TIMER_TRIGGER_RECONCILE_MS: number = 10_000;

  /**
   * Most fires per task message: a step's fires of a slice go out in messages of up to this many (1: one
   * message per fire). Each message costs the broker, its WebSocket proxy and both clients about the same
   * whatever it carries, so at thousands of fires a second this is most of the transport's CPU (docs/architecture.md, "trigger").
   */
  @IsInt() @Min(1) @Max(MAX_TASKS_PER_MESSAGE)
  TIMER_TRIGGER_BATCH_MAX: number = 100;

  /** Slices walked at once by one process (2 minutes x buckets is the steady state, e.g. 20). */
  @IsInt() @Min(1) @Max(1_000)
  TIMER_TRIGGER_CONCURRENCY: number = 32;
}

/** The trigger's variable names, for `bootstrapRole({ extraVariables })` (so they are not reported as typos). */
export const TRIGGER_VARIABLES: readonly string[] = Object.keys(new TriggerEnv());

/** The validated trigger settings, injectable by class. */
export class TriggerConfig {
  constructor(readonly env: TriggerEnv) {
    // Fires created within NEAR_NOW_MS of their time are published by whoever creates them; the walk
    // must not run further ahead than that, or a fire created just ahead of it would wait for the
    // reconciler.
    if (env.TIMER_TRIGGER_LEAD_MS + env.TIMER_TRIGGER_STEP_MS > NEAR_NOW_MS) {
      throw new ConfigError([`TIMER_TRIGGER_LEAD_MS + TIMER_TRIGGER_STEP_MS must be at most ${NEAR_NOW_MS} ms (got ${env.TIMER_TRIGGER_LEAD_MS + env.TIMER_TRIGGER_STEP_MS})`]);
    }
  }

  get stepMs(): number {
    return this.env.TIMER_TRIGGER_STEP_MS;
  }
  get leadMs(): number {
    return this.env.TIMER_TRIGGER_LEAD_MS;
  }
  get reconcileMs(): number {
    return this.env.TIMER_TRIGGER_RECONCILE_MS;
  }
  get concurrency(): number {
    return this.env.TIMER_TRIGGER_CONCURRENCY;
  }
  get batchMax(): number {
    return this.env.TIMER_TRIGGER_BATCH_MAX;
  }
  get leaseMs(): number {
    return this.env.TIMER_SLICE_LEASE_MS;
  }
}
