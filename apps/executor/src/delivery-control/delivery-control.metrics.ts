import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '@timer/platform';

export const DEFERRAL_REASONS = ['circuit_open', 'retry_after', 'origin_busy', 'app_share'] as const;
export type DeferralReason = (typeof DEFERRAL_REASONS)[number];

/** Origins exported by name in timer_origin_circuit_state (by calls); the rest are one series, `other`. */
export const TOP_ORIGINS = 10;

/** Metrics of the per-origin and per-app delivery control (bounded labels: reasons, top origins + `other`). */
@Injectable()
export class DeliveryControlMetrics {
  readonly deferred: Counter<'reason'>;
  readonly circuitState: Gauge<'origin'>;
  readonly circuitOpened: Counter;
  readonly appsActive: Gauge;
  private collector: () => void = () => undefined;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.deferred = new Counter({
      name: 'timer_delivery_deferred_total',
      help:
        'Fires not called now and scheduled again: circuit_open and retry_after (their origin), origin_busy (no slot of the origin in time): ' +
        'recorded on the row and the same attempt published again (no attempt used, bounded by the fire\'s deadline); app_share (the app holds its share of the handlers): handed back to the broker before the claim',
      labelNames: ['reason'],
      registers,
    });
    this.circuitState = new Gauge({
      name: 'timer_origin_circuit_state',
      help: `Circuit of a callback origin in this executor: 0 closed, 1 half-open, 2 open; the ${TOP_ORIGINS} origins with most calls by name, the worst of the rest as origin="other"`,
      labelNames: ['origin'],
      registers,
      collect: () => this.collector(),
    });
    this.circuitOpened = new Counter({ name: 'timer_origin_circuit_opened_total', help: 'Times a circuit opened (after consecutive failures or a failed probe)', registers });
    this.appsActive = new Gauge({ name: 'timer_executor_apps_active', help: 'Apps sharing this executor\'s handlers now (holding fires or seen within 5 s)', registers });
    for (const reason of DEFERRAL_REASONS) this.deferred.inc({ reason }, 0);
  }

  /** What refreshes the gauges at scrape time (the origins' states live in DeliveryControl). */
  onCollect(fn: () => void): void {
    this.collector = fn;
  }
}
