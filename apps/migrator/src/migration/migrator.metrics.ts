import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The migrator's Prometheus metrics (registered on the role's registry). */
export class MigratorMetrics {
  readonly windowsCompleted: Counter;
  readonly windowsFailed: Counter;
  readonly firesCreated: Counter;
  readonly lastCompletedWindow: Gauge;
  readonly windowDuration: Histogram;
  readonly rangesMigrated: Counter;
  readonly pacePaused: Counter;
  readonly paceChunks: Counter<'state'>;
  readonly paceChunkRows: Gauge;
  readonly executorLag: Gauge;
  readonly minuteBuckets: Histogram;
  readonly triggerBuckets: Gauge;

  constructor(registry: Registry) {
    this.windowsCompleted = new Counter({ name: 'timer_migrator_windows_completed_total', help: 'Windows this process migrated and recorded as completed', registers: [registry] });
    this.windowsFailed = new Counter({ name: 'timer_migrator_window_failures_total', help: 'Window runs that failed or lost their lock (retried on the next tick)', registers: [registry] });
    this.firesCreated = new Counter({ name: 'timer_migrator_fires_created_total', help: 'Task rows the migrator inserted (existing rows are not counted)', registers: [registry] });
    this.lastCompletedWindow = new Gauge({
      name: 'timer_migrator_last_completed_window_start_seconds',
      help: 'Start (unix seconds) of the latest window this process completed',
      registers: [registry],
    });
    this.rangesMigrated = new Counter({
      name: 'timer_migrator_ranges_total',
      help: 'Window ranges (timer-migrate-ranges messages) by outcome: migrated here, skipped (already done), failed (redelivered)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.pacePaused = new Counter({
      name: 'timer_migrator_pace_paused_seconds_total',
      help: 'Time expansions spent paused between chunks because the executors were late',
      registers: [registry],
    });
    this.paceChunks = new Counter({
      name: 'timer_migrator_pace_chunks_total',
      help: 'Chunks of paced expansions by what followed them: idle (full speed), late (smaller chunks, pauses), deadline (full speed to finish in time), unpaced (nothing left by the estimate)',
      labelNames: ['state'],
      registers: [registry],
    });
    this.paceChunkRows = new Gauge({ name: 'timer_migrator_pace_chunk_rows', help: 'Rows of the next chunk of the paced expansion', registers: [registry] });
    this.executorLag = new Gauge({
      name: 'timer_migrator_executor_lag_seconds',
      help: 'How late the executors started their calls (the largest fresh report), as the pacing last read it',
      registers: [registry],
    });
    this.minuteBuckets = new Histogram({
      name: 'timer_migrator_minute_buckets',
      help: 'Bucket count (slices) in force for each minute of a window the migrator planned, from the minute\'s fires',
      buckets: [1, 2, 5, 10, 16, 24, 32, 48, 64, 128, 256, 1024],
      registers: [registry],
    });
    this.triggerBuckets = new Gauge({
      name: 'timer_migrator_trigger_buckets',
      help: 'Most buckets the live triggers\' slots allow a minute (a third of them once the largest trigger is gone); below TIMER_SLICE_BUCKETS: no growth',
      registers: [registry],
    });
    this.windowDuration = new Histogram({
      name: 'timer_migrator_window_duration_seconds',
      help: 'Time to migrate one window',
      buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1200],
      registers: [registry],
    });
  }
}
