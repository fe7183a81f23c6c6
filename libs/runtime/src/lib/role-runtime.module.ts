import { DynamicModule, Module, Type } from '@nestjs/common';
import { BATCHED_TOPICS, TOPOLOGY } from '@timer/contracts';
import { DalModule, MysqlHealthCheck } from '@timer/dal';
import { ConfigModule, DependencyCheck, HealthModule, MetricsModule, RoleConfig, TracingModule } from '@timer/platform';
import { PulsarHealthCheck, PulsarModule } from '@timer/pulsar-transport';
import { RedisHealthCheck, RedisModule } from '@timer/redis';

const INFRA: Record<'mysql' | 'redis' | 'pulsar', { module: Type<unknown> | DynamicModule; check: Type<DependencyCheck> }> = {
  mysql: { module: DalModule, check: MysqlHealthCheck },
  redis: { module: RedisModule, check: RedisHealthCheck },
  // Every role creates every topic and subscription, so whichever starts first, nothing is published
  // into a topic its consumer's subscription does not exist on yet.
  pulsar: { module: PulsarModule.forRoot({ topology: TOPOLOGY, batching: BATCHED_TOPICS }), check: PulsarHealthCheck },
};

/**
 * Everything a role process shares: validated config, metrics, fire tracing, and a client plus a readiness check
 * for exactly the dependencies the role declares in `ROLES`.
 */
@Module({})
export class RoleRuntimeModule {
  static forRole(config: RoleConfig): DynamicModule {
    const deps = config.role.dependencies.map((d) => INFRA[d]);
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
