import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLOCK, NowClock } from '@timer/platform';
import { MINUTE_MS, minuteOf, SliceMessage } from '@timer/contracts';
import { LOCK_RESOURCES, RedisLock } from '@timer/redis';
import { SchedulerConfig } from '../config/scheduler.env';
import { SchedulerMetrics } from './scheduler.metrics';
import { SLICE_PUBLISHER, SLICE_STATE_STORE } from './scheduler.tokens';
import type { SlicePublisher } from './slice.publisher';
import type { SliceStateStore } from './slice-state.store';

export type Locks = Pick<RedisLock, 'tryAcquire'>;

/** What one tick did (for logs and tests). */
export interface TickResult {
  /** Slices published, with the lock token of this offer. */
  offered: SliceMessage[];
  /** Slices not done whose lock is held (being walked, or offered within the lease). */
  held: number;
  /** Slices whose publish failed (lock released again). */
  failed: number;
  /** Slices in the range not marked done. */
  open: number;
}

/**
 * Offers every not-done slice of the lookback to the triggers, at most once per lease (see
 * docs/architecture.md, "scheduler"): per tick, one pipelined round trip reads every done marker, then
 * each open slice's lock is tried (SET NX PX) and the winner publishes `SliceMessage` keyed
 * `<minute>:<bucket>`. Replicas run side by side: the lock lets one of them offer a slice.
 */
@Injectable()
export class SchedulerService {
  private readonly logger = new Logger(SchedulerService.name);
  /** Minutes whose every slice is done: never change again, skipped without a Redis call. */
  private readonly doneMinutes = new Set<number>();

  constructor(
    @Inject(SLICE_STATE_STORE) private readonly store: SliceStateStore,
    @Inject(RedisLock) private readonly locks: Locks,
    @Inject(SLICE_PUBLISHER) private readonly publisher: SlicePublisher,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly config: SchedulerConfig,
    private readonly metrics: SchedulerMetrics,
  ) {}

  async tick(): Promise<TickResult> {
    const end = this.metrics.tickDuration.startTimer();
    try {
      return await this.offer();
    } finally {
      end();
    }
  }

  private async offer(): Promise<TickResult> {
    const now = this.clock.now();
    const current = minuteOf(now);
    const first = current - this.config.lookbackMinutes * MINUTE_MS;
    // The next minute is offered `leadMs` before it starts, so its first step is not late.
    const last = minuteOf(now + this.config.leadMs);
    for (const m of this.doneMinutes) if (m < first) this.doneMinutes.delete(m);
    const minutes: number[] = [];
    for (let m = first; m <= last; m += MINUTE_MS) if (!this.doneMinutes.has(m)) minutes.push(m);

    // A minute the migrator planned has its count recorded (from its fires) long before; one it did not
    // (downtime, a fresh start) gets the default here, and everyone uses that from then on.
    const counts = await this.store.buckets(minutes);
    const currentAt = minutes.indexOf(current);
    if (currentAt >= 0) this.metrics.minuteBuckets.set(counts[currentAt]);
    const states = await this.store.state(minutes.map((minute, i) => ({ minute, buckets: counts[i] })));
    const open: { minute: number; bucket: number; buckets: number }[] = [];
    const finished: number[] = [];
    for (const s of states) {
      if (s.allDone) {
        this.doneMinutes.add(s.minute);
        continue;
      }
      if (s.minute < current && s.done.every(Boolean)) {
        finished.push(s.minute);
        continue;
      }
      s.done.forEach((done, bucket) => {
        if (!done) open.push({ minute: s.minute, bucket, buckets: s.buckets });
      });
    }
    this.metrics.openSlices.set(open.length);
    // The marker only saves work: a failure to write it is harmless (the next tick reads the buckets).
    await Promise.all(
      finished.map((m) =>
        this.store.markMinuteDone(m).then(
          () => this.doneMinutes.add(m),
          (e: Error) => this.logger.warn(`minute ${m}: marking it done failed: ${e.message}`),
        ),
      ),
    );

    const result: TickResult = { offered: [], held: 0, failed: 0, open: open.length };
    /** Offers one slice; false when another offer holds it (being walked or offered within the lease). */
    const offer = async ({ minute, bucket, buckets }: (typeof open)[number]): Promise<boolean> => {
      const lock = await this.locks.tryAcquire({ resource: LOCK_RESOURCES.slice(minute, bucket), ttlMs: this.config.sliceLeaseMs });
      if (!lock) {
        result.held++;
        return false;
      }
      const message: SliceMessage = { minute, bucket, buckets, lockToken: lock.token };
      try {
        await this.publisher.publish(message);
        result.offered.push(message);
        this.metrics.slicesOffered.inc();
      } catch (e) {
        // Without a message nobody works the slice: free it so the next tick offers it again.
        result.failed++;
        this.metrics.publishFailures.inc();
        this.logger.warn(`slice ${minute}:${bucket}: publish failed, lock released for the next tick: ${(e as Error).message}`);
        await lock.release();
      }
      return true;
    };
    // Fires due now must not queue behind a catch-up: the current and next minute go out first (and
    // reach the triggers first), then the past minutes, newest first, at most catchUpSlices of them
    // held at once (a held one counts: it is being walked).
    await Promise.all(open.filter((o) => o.minute >= current).map(offer));
    let budget = this.config.catchUpSlices;
    for (const o of open.filter((x) => x.minute < current).sort((a, b) => b.minute - a.minute)) {
      if (budget <= 0) break;
      await offer(o);
      budget--;
    }
    if (result.offered.length > 0) {
      const late = result.offered.filter((m) => m.minute < current).length;
      this.logger.debug(`offered ${result.offered.length} slices (${late} of past minutes); ${result.held} held, ${result.open} open`);
    }
    return result;
  }
}
