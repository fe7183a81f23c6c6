import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RoleConfig } from '../config/role-config';

/**
 * The process's Prometheus registry; roles register their own counters and histograms on it, named
 * `timer_*`. prom-client's process and Node.js metrics keep their standard, unprefixed names
 * (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`), which stock dashboards and alerts
 * query. Every series carries `role`.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  constructor(@Inject(RoleConfig) config: RoleConfig) {
    this.registry.setDefaultLabels({ role: config.role.name });
    collectDefaultMetrics({ register: this.registry });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
