import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { BucketHistogram, MetricsService } from '@timer/platform';

export type DeliveryOutcome = 'succeeded' | 'retry' | 'failed';
export type DuplicateReason = 'settled' | 'in_flight' | 'stale';
const MISSED_REASONS = ['late', 'coalesced', 'overlap', 'maintenance', 'timer_disabled', 'timer_deleted', 'timer_not_found'] as const;
export type MissedReason = (typeof MISSED_REASONS)[number];

/** The executor's Prometheus metrics (registered on the role's registry, served at /metrics). */
@Injectable()
export class ExecutorMetrics {
  readonly deliveries: Counter<'outcome'>;
  // Observed once per fire each: see BucketHistogram.
  readonly lateness: BucketHistogram;
  readonly callbackDuration: BucketHistogram;
  readonly duplicates: Counter<'reason'>;
  readonly redeliveries: Counter<'reason'>;
  readonly detectedDuplicates: Counter<'reason'>;
  readonly missed: Counter<'reason'>;
  readonly retries: Counter;
  readonly deadLettered: Counter;
  readonly deferred: Counter<'reason'>;
  readonly fenced: Counter;
  readonly invalid: Counter;
  readonly flushSize: Histogram;
  readonly flushDuration: Histogram;
  readonly claimBatchSize: Histogram;
  readonly prefetched: Counter;
  readonly takeovers: Counter<'call'>;
  readonly settledFilter: Counter<'answer'>;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.deliveries = new Counter({
      name: 'timer_deliveries_total',
      help: 'Callback deliveries by outcome: succeeded, retry (failed, another attempt scheduled), failed (final)',
      labelNames: ['outcome'],
      registers,
    });
    this.lateness = new BucketHistogram({
      name: 'timer_fire_lateness_seconds',
      help: 'Callback start minus the fire time',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.callbackDuration = new BucketHistogram({
      name: 'timer_callback_duration_seconds',
      help: 'Duration of a callback request',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.duplicates = new Counter({
      name: 'timer_duplicate_messages_total',
      help: 'Task messages not delivered because the claim fence refused them (settled, held by another executor, or a stale attempt)',
      labelNames: ['reason'],
      registers,
    });
    this.redeliveries = new Counter({
      name: 'timer_duplicate_deliveries_total',
      help: 'Callbacks sent with X-Timer-Redelivery: 1, because an earlier delivery of the same attempt may have reached the receiver (holder_died: taken over from a dead executor whose call had started or may have; lease_expired: the holder\'s lease ran out; claim_lost: a first attempt claimed just after Redis lost its claims)',
      labelNames: ['reason'],
      registers,
    });
    this.detectedDuplicates = new Counter({
      name: 'timer_duplicate_deliveries_detected_total',
      help: 'Callbacks found after the call to have repeated a delivery without X-Timer-Redelivery: 1 (claim_lost: a first attempt claimed in Redis whose claim was lost, e.g. to a flush; the outcome fence in MySQL refused its record)',
      labelNames: ['reason'],
      registers,
    });
    this.missed = new Counter({
      name: 'timer_missed_fires_total',
      help: 'Fires recorded missed (not called) by reason',
      labelNames: ['reason'],
      registers,
    });
    this.retries = new Counter({ name: 'timer_retries_total', help: 'Retry attempts scheduled on the retries topic', registers });
    this.deadLettered = new Counter({ name: 'timer_dead_lettered_total', help: 'Fires published to the dead-letter topic', registers });
    this.deferred = new Counter({
      name: 'timer_executor_deferred_total',
      help: 'Task messages re-published for later: early (run_at too far ahead) or held (recheck after the holder lease)',
      labelNames: ['reason'],
      registers,
    });
    this.fenced = new Counter({
      name: 'timer_fenced_outcomes_total',
      help: 'Outcomes not written because the claim had passed to another executor (lease expired)',
      registers,
    });
    this.invalid = new Counter({ name: 'timer_invalid_task_messages_total', help: 'Task messages that are not a valid TaskMessage (acked and logged)', registers });
    this.flushSize = new Histogram({
      name: 'timer_executor_flush_rows',
      help: 'Outcome rows written per batch flush',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
      registers,
    });
    this.flushDuration = new Histogram({
      name: 'timer_executor_flush_duration_seconds',
      help: 'Duration of one outcome batch flush',
      buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    });
    this.claimBatchSize = new Histogram({
      name: 'timer_executor_claim_batch_rows',
      help: 'Claims taken per batched claim statement',
      buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500],
      registers,
    });
    this.settledFilter = new Counter({
      name: 'timer_settled_filter_answers_total',
      help: "The settled fires' bloom filter's answers (TIMER_EXECUTOR_BLOOM): not_settled (no row read), maybe (the row read), unknown (no usable filter); settled: a row read while the filter is on found the fire settled (dropped without a claim)",
      labelNames: ['answer'],
      registers,
    });
    this.prefetched = new Counter({ name: 'timer_executor_prefetched_definitions_total', help: 'Timer definitions loaded by the prefetch', registers });
    this.takeovers = new Counter({
      name: 'timer_executor_takeovers_total',
      help: 'Fires taken over from a dead executor, by whether its call had started: called, not_called, unknown (nothing proves it had not; counted as called)',
      labelNames: ['call'],
      registers,
    });
    // Exported at 0 from the start, so that increase() in the TimerMissedFires alert
    // (deploy/prometheus/alerts.yml) also sees a process's first missed fire.
    for (const reason of MISSED_REASONS) this.missed.inc({ reason }, 0);
  }
}
