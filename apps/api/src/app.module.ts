import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AppRepository, CalendarRepository, LedgerRepository, MaintenanceWindowRepository, MYSQL_DEPENDENCY, OverviewRepository, QuotaRepository } from '@timer/dal';
import { CLOCK, RoleConfig, RoleRuntimeModule, systemClock } from '@timer/platform';
import { FireRegenerator, FireWriter, TaskPublisher } from '@timer/fire';
import { REDIS_DEPENDENCY } from '@timer/redis';
import { PULSAR_DEPENDENCY } from '@timer/pulsar-transport';
import { AppsController } from './apps/apps.controller';
import { AppsService } from './apps/apps.service';
import { SecretSealer } from './apps/secret-sealer.service';
import { AuthFailureLimiterService } from './auth/auth-failure-limiter.service';
import { AuthGuard } from './auth/auth.guard';
import { APP_TOKENS } from './auth/auth.tokens';
import { RateLimiterService } from './auth/rate-limiter.service';
import { RedisWindowCounter } from './auth/redis-window';
import { TokenAuthService } from './auth/token-auth.service';
import { ApiExceptionFilter } from './common/api-exception.filter';
import { HttpSetupService } from './common/http-setup.service';
import { ApiValidationPipe } from './common/validation.pipe';
import { ApiConfig } from './config/api.env';
import { TasksController } from './tasks/tasks.controller';
import { TasksService } from './tasks/tasks.service';
import { TimersController } from './timers/timers.controller';
import { BackfillController } from './timers/backfill.controller';
import { BackfillService } from './timers/backfill.service';
import { QuotasController } from './quotas/quotas.controller';
import { QuotaService } from './quotas/quota.service';
import { PreviewController } from './timers/preview.controller';
import { PreviewService } from './timers/preview.service';
import { TimerEditService } from './timers/timer-edit.service';
import { TimersService } from './timers/timers.service';
import { AccountingController } from './accounting/accounting.controller';
import { AccountingService } from './accounting/accounting.service';
import { ApiMetrics } from './metrics/api.metrics';
import { MaintenanceController } from './maintenance/maintenance.controller';
import { MaintenanceService } from './maintenance/maintenance.service';
import { DeadLettersController } from './dlq/dlq.controller';
import { DeadLettersService } from './dlq/dlq.service';
import { OverviewController } from './overview/overview.controller';
import { OverviewService } from './overview/overview.service';
import { CalendarsController } from './calendars/calendars.controller';
import { CalendarsService } from './calendars/calendars.service';
import { CalendarResolver } from './timers/calendar-resolver';

/** The api role: REST API over the shared runtime (MySQL, Redis, Pulsar, health, metrics). */
@Module({})
export class AppModule {
  /**
   * Validates the api's own variables (a bad one throws `ConfigError`, which stops the boot) and builds
   * the module. `env` is for tests; the process passes nothing and `loadConfig` reads the environment.
   */
  static register(config: RoleConfig, env?: NodeJS.ProcessEnv): DynamicModule {
    const api = ApiConfig.load(env);
    return {
      module: AppModule,
      imports: [RoleRuntimeModule.forRole(config, { mysql: MYSQL_DEPENDENCY, redis: REDIS_DEPENDENCY, pulsar: PULSAR_DEPENDENCY })],
      controllers: [TimersController, PreviewController, BackfillController, TasksController, AppsController, AccountingController, QuotasController, MaintenanceController, DeadLettersController, OverviewController, CalendarsController],
      providers: [
        { provide: ApiConfig, useValue: api },
        { provide: CLOCK, useValue: systemClock },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        ApiMetrics,
        HttpSetupService,
        // Repositories come from DalModule (global, via RoleRuntimeModule).
        { provide: APP_TOKENS, useExisting: AppRepository },
        TokenAuthService,
        RedisWindowCounter,
        RateLimiterService,
        AuthFailureLimiterService,
        AuthGuard,
        TaskPublisher,
        FireWriter,
        FireRegenerator,
        TimersService,
        TimerEditService,
        BackfillService,
        QuotaRepository,
        QuotaService,
        PreviewService,
        TasksService,
        AppsService,
        SecretSealer,
        LedgerRepository,
        AccountingService,
        DeadLettersService,
        MaintenanceWindowRepository,
        MaintenanceService,
        OverviewRepository,
        OverviewService,
        CalendarRepository,
        CalendarsService,
        CalendarResolver,
      ],
    };
  }
}
