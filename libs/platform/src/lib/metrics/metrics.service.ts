import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RoleConfig } from '../config/role-config';

/** The process's Prometheus registry; roles register their own counters and histograms on it. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  constructor(@Inject(RoleConfig) config: RoleConfig) {
    this.registry.setDefaultLabels({ role: config.role.name });
    collectDefaultMetrics({ register: this.registry, prefix: 'timer_' });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
