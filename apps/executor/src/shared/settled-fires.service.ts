import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { FireRef, fireId, TaskMessage } from '@timer/contracts';
import { FINISHED_TASK_STATUSES, FireClaimRepository, FireState } from '@timer/dal';
import { SliceBloom, SliceIndex, SliceItem } from '@timer/redis';
import { ExecutorMetrics } from './executor.metrics';

export function isSettled(s: FireState): boolean {
  return FINISHED_TASK_STATUSES.includes(s.status);
}

/** What the filter says of a fire: certainly not settled, maybe settled (ask the row), or nothing (no filter). */
export type Screen = 'not-settled' | 'maybe' | 'unknown';

/** Slices whose fire count this process keeps (it sizes a slice's filter only when it writes first). */
const SIZED_SLICES = 16;

interface Waiting<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

/**
 * Whether a fire is settled: the task row is the answer; with `TIMER_EXECUTOR_BLOOM`, a bloom filter
 * per slice (`SliceBloom`, docs/scaling.md "Bloom filter per slice") of the fires whose outcome was
 * written first spares the row read when it has certainly not seen the fire. "Maybe" is never an
 * answer on its own: the row (or the claim) decides. Not asked on the way to an ordinary claim: the
 * claim itself refuses a settled fire and returns its state (docs/architecture.md, "executor").
 */
@Injectable()
export class SettledFires {
  private readonly logger = new Logger(SettledFires.name);
  private readonly sized = new Map<number, Promise<number>>();
  private checks: Waiting<SliceItem, Screen>[] = [];
  private reads: Waiting<FireRef, FireState | null>[] = [];

  constructor(
    private readonly claims: FireClaimRepository,
    @Optional() @Inject(SliceBloom) private readonly bloom?: SliceBloom | null,
    @Optional() @Inject(SliceIndex) private readonly index?: SliceIndex,
    @Optional() private readonly metrics?: ExecutorMetrics,
  ) {}

  /** Whether the filter is on. */
  get screening(): boolean {
    return this.bloom !== null && this.bloom !== undefined;
  }

  /** Settled, by its row (one read). */
  async isSettled(msg: TaskMessage): Promise<boolean> {
    const s = await this.claims.state(msg);
    return this.confirmed(s);
  }

  /** Whether a row read after a "maybe" (or without a filter) shows the fire settled; counts the filter's confirmed answers. */
  confirmed(s: FireState | null): boolean {
    const settled = s !== null && isSettled(s);
    if (settled && this.screening) this.metrics?.settledFilter.inc({ answer: 'settled' });
    return settled;
  }

  /**
   * The filter's answer for the fire; the checks of one event-loop turn share one Redis round trip (one
   * script call per slice). A Redis error answers 'unknown': the caller goes on as without a filter.
   */
  screen(msg: FireRef): Promise<Screen> {
    if (!this.bloom) return Promise.resolve('unknown');
    return this.queue(this.checks, { at: msg.runAt, id: fireId(msg.timerId, msg.runAt) }, () => this.runChecks());
  }

  /** The fire's row state (null: no row); the reads of one event-loop turn share one query. */
  state(msg: FireRef): Promise<FireState | null> {
    return this.queue(this.reads, { timerId: msg.timerId, runAt: msg.runAt }, () => this.runReads());
  }

  /**
   * Adds fires whose settled outcome is written to their slices' filters, in the background: one
   * pipelined round trip for the batch. A failure only costs later reads.
   */
  mark(fires: readonly FireRef[]): void {
    const bloom = this.bloom;
    if (!bloom || fires.length === 0) return;
    const items = fires.map((f) => ({ at: f.runAt, id: fireId(f.timerId, f.runAt) }));
    bloom.add(items, (minute) => this.firesOf(bloom, minute)).catch((e: Error) => this.logger.debug(`adding ${fires.length} settled fire(s) to the bloom filter failed: ${e.message}`));
  }

  /** A slice's fire count, from the slice index, read once per slice by this process. */
  private firesOf(bloom: SliceBloom, minute: number): Promise<number> {
    let n = this.sized.get(minute);
    if (n === undefined) {
      n = this.index ? bloom.indexedFires(this.index, minute).catch(() => 0) : Promise.resolve(0);
      this.sized.set(minute, n);
      if (this.sized.size > SIZED_SLICES) this.sized.delete(this.sized.keys().next().value as number);
    }
    return n;
  }

  private queue<T, R>(list: Waiting<T, R>[], item: T, run: () => void): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (list.length === 0) setImmediate(run);
      list.push({ item, resolve, reject });
    });
  }

  private runChecks(): void {
    const batch = this.checks;
    this.checks = [];
    (this.bloom as SliceBloom).check(batch.map((w) => w.item)).then(
      (answers) =>
        batch.forEach((w, i) => {
          const screen: Screen = answers[i] === true ? 'maybe' : answers[i] === false ? 'not-settled' : 'unknown';
          this.metrics?.settledFilter.inc({ answer: screen === 'not-settled' ? 'not_settled' : screen });
          w.resolve(screen);
        }),
      (e: Error) => {
        this.logger.debug(`bloom filter check of ${batch.length} fire(s) failed (going on without it): ${e.message}`);
        this.metrics?.settledFilter.inc({ answer: 'unknown' }, batch.length);
        batch.forEach((w) => w.resolve('unknown'));
      },
    );
  }

  private runReads(): void {
    const batch = this.reads;
    this.reads = [];
    this.claims.stateMany(batch.map((w) => w.item)).then(
      (states) => batch.forEach((w, i) => w.resolve(states[i])),
      (e: unknown) => batch.forEach((w) => w.reject(e)),
    );
  }
}
