/**
 * One dependency a role needs to be ready (MySQL, Redis, Pulsar...). Infrastructure libs provide
 * implementations; `HealthModule.register` turns them into the readiness report of `/health`.
 */
export interface DependencyCheck {
  /** Key in the health report, e.g. `mysql`. */
  readonly name: string;
  /** Resolves when the dependency answers; rejects with a short reason otherwise. */
  ping(): Promise<void>;
}

export const DEPENDENCY_CHECKS = Symbol('DEPENDENCY_CHECKS');
