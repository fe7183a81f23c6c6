import { DynamicModule, Global, Module } from '@nestjs/common';
import { RoleConfig, TracingSettings } from '../config/role-config';
import { NO_TRACING, Tracing } from './fire-tracing';

/** The role's tracing: exported to `settings` as `timer-<role>`, or {@link NO_TRACING}. */
export async function createTracing(role: string, settings: TracingSettings | undefined): Promise<Tracing> {
  if (!settings) return NO_TRACING;
  // Loaded only when configured: a role without an endpoint never loads the OpenTelemetry SDK.
  const { OtlpTracing } = await import('./otlp-tracing');
  return new OtlpTracing(`timer-${role}`, settings);
}

/** Makes the role's {@link Tracing} injectable everywhere (a no-op one when tracing is off). */
@Global()
@Module({})
export class TracingModule {
  static forRoot(config: RoleConfig): DynamicModule {
    return {
      module: TracingModule,
      providers: [{ provide: Tracing, useFactory: () => createTracing(config.role.name, config.tracing) }],
      exports: [Tracing],
    };
  }
}
