import { BeforeApplicationShutdown, Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { FINISHED_TASK_STATUSES, FireOutcome, FireOutcomeRepository, OUTCOME_CHUNK } from '@timer/dal';
import { ExecutorConfig } from '../config/executor.env';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { FireLanes } from '../intake/fire-lanes';
import { InstantDiagnostics } from '../shared/instant-diagnostics';
import { InstantSends } from '../shared/instant-sends';
import { SettledFires } from '../shared/settled-fires.service';

interface Pending {
  outcome: FireOutcome;
  resolve: (applied: boolean) => void;
  reject: (e: unknown) => void;
}

/**
 * Attempts of one batch write before its callers get the error (their messages are then nacked):
 * 6, 200 ms to 3.2 s apart (6.2 s in all), so a MySQL restart of a few seconds does not turn
 * delivered fires into redeliveries once their claims' leases run out.
 */
const WRITE_ATTEMPTS = 6;
/** Longest a batch waits for a due instant's calls to be answered (InstantSends) before it is written. */
export const OUTCOME_HOLD_MAX_MS = 500;

/**
 * Writes fire outcomes in batches: a batch is written `TIMER_EXECUTOR_FLUSH_MS` after its first row,
 * or at once when it reaches 500 rows (one statement). `record` resolves only once the row is written
 * (with whether the claim still held), so a message is acked only after its outcome is durable.
 */
@Injectable()
export class OutcomeRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger(OutcomeRecorder.name);
  private buffer: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly writing = new Set<Promise<void>>();
  private held = false;

  constructor(
    private readonly outcomes: FireOutcomeRepository,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly diag?: InstantDiagnostics,
    @Optional() private readonly sends?: InstantSends,
    @Optional() private readonly lanes?: FireLanes,
    @Optional() private readonly settled?: SettledFires,
  ) {}

  /** Queues the outcome; resolves true once written, false when the claim had passed to someone else. */
  record(outcome: FireOutcome): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.buffer.push({ outcome, resolve, reject });
      if (this.buffer.length >= OUTCOME_CHUNK) this.flushSoon();
      else if (!this.timer) this.timer = setTimeout(() => this.flushSoon(), this.config.flushMs);
    });
  }

  /** Writes what is queued and waits for every write in progress. */
  async flush(): Promise<void> {
    if (this.buffer.length > 0) this.flushNow();
    while (this.writing.size > 0) await Promise.allSettled([...this.writing]);
  }

  /** Rows queued and not yet handed to a write. */
  get queued(): number {
    return this.buffer.length;
  }

  // The transport drains in-flight handlers (each waits for its row) before Nest shuts down; this
  // covers anything still queued, before the DataSource closes (it closes in onApplicationShutdown).
  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  /**
   * Writes what is queued, unless a due instant's calls are still going on (InstantSends) and no fire
   * waits for a slot of the due fires' lane: then once they are answered, at most OUTCOME_HOLD_MAX_MS
   * later. Outcome writes (the executor's SQL and MariaDB's work) compete with a second's last calls for
   * the CPU; a fire waiting for a slot needs the writes to free one.
   */
  private flushSoon(): void {
    if (this.held) return;
    if (this.sends?.busy && this.lanes?.tasks.queued === 0) {
      this.held = true;
      void this.sends.whenIdle(OUTCOME_HOLD_MAX_MS).then(() => {
        this.held = false;
        if (this.buffer.length > 0) this.flushNow();
      });
      return;
    }
    this.flushNow();
  }

  private flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, OUTCOME_CHUNK);
      const w = this.write(batch).finally(() => this.writing.delete(w));
      this.writing.add(w);
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    const started = this.clock.now();
    this.diag?.did('outcome-write', batch.length);
    for (let attempt = 1; ; attempt++) {
      try {
        const applied = await this.outcomes.recordOutcomes(batch.map((p) => p.outcome));
        this.metrics.flushSize.observe(batch.length);
        this.metrics.flushDuration.observe((this.clock.now() - started) / 1000);
        batch.forEach((p, i) => p.resolve(applied[i] ?? false));
        // The batch's settled fires go into the bloom filter (when on) in one round trip, after the acks.
        if (this.settled?.screening) this.settled.mark(batch.filter((p, i) => applied[i] && FINISHED_TASK_STATUSES.includes(p.outcome.status)).map((p) => p.outcome));
        return;
      } catch (e) {
        if (attempt >= WRITE_ATTEMPTS) {
          this.logger.error(`writing ${batch.length} fire outcomes failed ${attempt} times; their messages are nacked: ${(e as Error).message}`);
          batch.forEach((p) => p.reject(e));
          return;
        }
        this.logger.warn(`writing ${batch.length} fire outcomes failed (attempt ${attempt}), retrying: ${(e as Error).message}`);
        await this.clock.sleep(100 * 2 ** attempt);
      }
    }
  }
}
