import { DynamicModule, Module, Type } from '@nestjs/common';
import { RoleConfig } from '../config/role-config';
import { Dependency } from '../config/roles';
import { ConfigModule } from '../config/config.module';
import { DependencyCheck } from '../health/dependency-check';
import { HealthModule } from '../health/health.module';
import { MetricsModule } from '../metrics/metrics.module';
import { TracingModule } from '../tracing/tracing';

/** What an infrastructure lib gives a role that depends on it: its global module and its readiness check. */
export interface RoleDependency {
  readonly module: Type<unknown> | DynamicModule;
  readonly check: Type<DependencyCheck>;
}

/**
 * The infrastructure a role may be given, by dependency. Passed in by the app rather than imported here:
 * the infrastructure libs build on this one (config, health), so naming them here would tie them in a loop.
 */
export type RoleDependencies = Partial<Record<Dependency, RoleDependency>>;

/**
 * Everything a role process shares: validated config, metrics, fire tracing, and a client plus a readiness check
 * for exactly the dependencies the role declares in `ROLES`.
 */
@Module({})
export class RoleRuntimeModule {
  static forRole(config: RoleConfig, available: RoleDependencies): DynamicModule {
    const deps = config.role.dependencies.map((d) => {
      const dep = available[d];
      if (!dep) throw new Error(`role ${config.role.name} declares a ${d} dependency its app module does not provide`);
      return dep;
    });
    return {
      module: RoleRuntimeModule,
      imports: [
        ConfigModule.forRoot(config),
        MetricsModule,
        TracingModule.forRoot(config),
        ...deps.map((d) => d.module),
        HealthModule.register(deps.map((d) => d.check)),
      ],
    };
  }
}
