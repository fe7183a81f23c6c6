import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Where a published fire was found: the Redis slice index, or only in MySQL (reconcile / fallback). */
export type FireSource = 'index' | 'mysql';
/** How a slice message ended: acked when finished / superseded / invalid, nacked when stopped / failed. */
export type SliceOutcome = 'finished' | 'superseded' | 'stopped' | 'failed' | 'invalid';

/** The trigger's Prometheus metrics, registered on the role's registry. */
export class TriggerMetrics {
  readonly firesPublished: Counter<'source'>;
  readonly stepLag: Histogram;
  readonly slices: Counter<'outcome'>;
  readonly slicesInFlight: Gauge;
  readonly mysqlFallbacks: Counter<'reason'>;
  readonly errors: Counter<'operation'>;

  constructor(registry: Registry) {
    this.firesPublished = new Counter({
      name: 'timer_trigger_fires_published_total',
      help: 'Task messages the broker acknowledged, by where the fire was found (index, or mysql only)',
      labelNames: ['source'],
      registers: [registry],
    });
    this.stepLag = new Histogram({
      name: 'timer_trigger_step_lag_seconds',
      help: 'How long after its publish time (step start - lead) a step with fires had all its task messages acknowledged',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600],
      registers: [registry],
    });
    this.slices = new Counter({
      name: 'timer_trigger_slices_total',
      help: 'Slice messages handled, by outcome (finished, superseded, stopped, failed, invalid)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.slicesInFlight = new Gauge({ name: 'timer_trigger_slices_in_flight', help: 'Slices being walked now', registers: [registry] });
    this.mysqlFallbacks = new Counter({
      name: 'timer_trigger_mysql_fallbacks_total',
      help: 'Steps read from MySQL instead of the Redis index because Redis failed',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.errors = new Counter({
      name: 'timer_trigger_errors_total',
      help: 'Survived failures by operation (extend, cursor, reconcile, read, publish, done, release)',
      labelNames: ['operation'],
      registers: [registry],
    });
  }
}
