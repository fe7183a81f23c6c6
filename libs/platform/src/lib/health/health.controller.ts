import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DEPENDENCY_CHECKS, DependencyCheck } from './dependency-check';
import { LifecycleService } from './lifecycle.service';

const PING_TIMEOUT_MS = 2_000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly lifecycle: LifecycleService,
    @Inject(DEPENDENCY_CHECKS) private readonly checks: DependencyCheck[],
  ) {}

  /** Readiness: 200 when every dependency of this role answers, 503 naming the ones that do not. */
  @Get()
  @HealthCheck()
  readiness() {
    if (this.lifecycle.draining) throw new ServiceUnavailableException({ status: 'shutting_down' });
    return this.health.check(this.checks.map((c) => () => this.ping(c)));
  }

  /** Liveness: the process serves HTTP; dependencies are deliberately not consulted. */
  @Get('live')
  liveness() {
    return { status: 'ok' };
  }

  private async ping(check: DependencyCheck): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(check.name);
    const started = Date.now();
    try {
      await withTimeout(check.ping(), PING_TIMEOUT_MS);
      return indicator.up({ latencyMs: Date.now() - started });
    } catch (e) {
      return indicator.down({ message: e instanceof Error ? e.message : String(e) });
    }
  }
}
