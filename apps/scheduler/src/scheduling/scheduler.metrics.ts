import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The scheduler's Prometheus metrics (registered on the role's registry). */
export class SchedulerMetrics {
  readonly slicesOffered: Counter;
  readonly publishFailures: Counter;
  readonly openSlices: Gauge;
  readonly minuteBuckets: Gauge;
  readonly tickDuration: Histogram;

  constructor(registry: Registry) {
    this.slicesOffered = new Counter({ name: 'timer_scheduler_slices_offered_total', help: 'Slice messages published (lock taken, broker acked)', registers: [registry] });
    this.publishFailures = new Counter({ name: 'timer_scheduler_publish_failures_total', help: 'Slice offers whose publish failed (lock released, retried next tick)', registers: [registry] });
    this.openSlices = new Gauge({ name: 'timer_scheduler_open_slices', help: 'Slices in the lookback not yet marked done (the current minute included)', registers: [registry] });
    this.minuteBuckets = new Gauge({ name: 'timer_scheduler_minute_buckets', help: 'Buckets (slices) of the current minute, as recorded: one slice message each', registers: [registry] });
    this.tickDuration = new Histogram({
      name: 'timer_scheduler_tick_duration_seconds',
      help: 'Duration of one scheduler tick',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    });
  }
}
