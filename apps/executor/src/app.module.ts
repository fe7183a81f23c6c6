import { DynamicModule, Module } from '@nestjs/common';
import { RoleConfig } from '@timer/platform';
import { RoleRuntimeModule } from '@timer/runtime';

@Module({})
export class AppModule {
  static register(config: RoleConfig): DynamicModule {
    return { module: AppModule, imports: [RoleRuntimeModule.forRole(config)] };
  }
}
