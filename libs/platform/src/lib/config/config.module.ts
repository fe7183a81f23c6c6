import { DynamicModule, Global, Module } from '@nestjs/common';
import { RoleConfig } from './role-config';

/** Makes the boot-time `RoleConfig` injectable everywhere; only `loadRoleConfig` reads the environment. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: RoleConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: RoleConfig, useValue: config }], exports: [RoleConfig] };
  }
}
