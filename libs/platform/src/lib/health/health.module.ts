import { DynamicModule, Module, Type } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DEPENDENCY_CHECKS, DependencyCheck } from './dependency-check';
import { HealthController } from './health.controller';
import { LifecycleService } from './lifecycle.service';

@Module({})
export class HealthModule {
  /** `checks` must be providers visible here (the infrastructure modules export theirs globally). */
  static register(checks: Type<DependencyCheck>[]): DynamicModule {
    return {
      module: HealthModule,
      global: true,
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController],
      providers: [
        LifecycleService,
        { provide: DEPENDENCY_CHECKS, useFactory: (...all: DependencyCheck[]) => all, inject: checks },
      ],
      exports: [LifecycleService],
    };
  }
}
