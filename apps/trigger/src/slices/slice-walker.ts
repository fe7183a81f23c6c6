import { Logger } from '@nestjs/common';
import { Clock } from '@timer/platform';
import { FireRef, fireId, MAX_TASKS_PER_MESSAGE, MINUTE_MS, SliceMessage, TaskMessage } from '@timer/contracts';
import type { SliceRange } from '@timer/dal';
import type { LockTokenExtension } from '@timer/redis';
import { FireSource, TriggerMetrics } from './trigger.metrics';

/** Longest single wait, so a stop request or a due lease extension is noticed promptly. */
const POLL_MS = 200;
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 2_000;
const LOG_EVERY_MS = 10_000;
/** The walk reconciles the range ahead once it is this close to the end of the range it read. */
const RECONCILE_AHEAD_MS = 2_000;

/** The slice's Redis state: lock fencing, cursor, done marker. Methods throw when Redis fails. */
export interface SliceState {
  /** Extends the slice lock with the message's token (or takes it back when it expired and is free). */
  extend(slice: SliceMessage, ttlMs: number): Promise<LockTokenExtension>;
  readCursor(minute: number, bucket: number): Promise<number | null>;
  writeCursor(minute: number, bucket: number, at: number): Promise<void>;
  markDone(minute: number, bucket: number): Promise<void>;
  /** Token-checked release. */
  release(slice: SliceMessage): Promise<boolean>;
}

/** The Redis slice index (`SliceIndex.due`). */
export interface DueFires {
  due(minute: number, bucket: number, fromMs: number, toMs: number): Promise<FireRef[]>;
}

/** Pending task rows of a slice in MySQL (`SliceTaskRepository.pendingInSlice`). */
export interface PendingFires {
  pendingInSlice(range: SliceRange): Promise<FireRef[]>;
}

/** Publishes task messages; resolves once the broker acknowledged the message. */
export interface TaskPublisher {
  publish(task: TaskMessage): Promise<void>;
  /** One message carrying all of `tasks` (at most MAX_TASKS_PER_MESSAGE). */
  publishBatch(tasks: readonly TaskMessage[]): Promise<void>;
}

export interface SliceWalkerOptions {
  stepMs: number;
  leadMs: number;
  reconcileMs: number;
  leaseMs: number;
  /**
   * Most fires per task message (default 1: one message per fire). A step's fires go out in messages of
   * up to this many: the broker and both WebSocket clients pay per message (docs/pipeline.md, "trigger").
   */
  batchMax?: number;
  /**
   * How long one operation (a step's read, its publishes, the done marker) may keep failing before
   * the walk gives up and the message is negatively acknowledged (redelivered, resumed from the
   * cursor). Default: the lease.
   */
  failureBudgetMs?: number;
}

export interface SliceWalkerDeps {
  clock: Clock;
  state: SliceState;
  index: DueFires;
  mysql: PendingFires;
  publisher: TaskPublisher;
  metrics: TriggerMetrics;
}

/** finished: minute done (ack). superseded: a newer offer owns the slice (ack). stopped: shutting down (nack). */
export type WalkResult = 'finished' | 'superseded' | 'stopped';

class Superseded extends Error {}
class StopRequested extends Error {}

interface Fire extends FireRef {
  id: string;
  source: FireSource;
}

/**
 * Walks one slice (minute, bucket): publishes one task message per fire, step by step, each step
 * `leadMs` before it starts, and keeps the cursor so a redelivered slice resumes (docs/pipeline.md,
 * "trigger"). Stateless between slices; one instance serves every slice of the process.
 */
export class SliceWalker {
  private readonly logger = new Logger(SliceWalker.name);

  constructor(
    private readonly deps: SliceWalkerDeps,
    private readonly options: SliceWalkerOptions,
  ) {
    for (const [name, value, min] of [
      ['stepMs', options.stepMs, 1],
      ['leadMs', options.leadMs, 0],
      ['reconcileMs', options.reconcileMs, 1],
      ['leaseMs', options.leaseMs, 3],
      ['batchMax', options.batchMax ?? 1, 1],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
    }
    if ((options.batchMax ?? 1) > MAX_TASKS_PER_MESSAGE) throw new RangeError(`batchMax must be at most ${MAX_TASKS_PER_MESSAGE}, got ${options.batchMax}`);
  }

  /**
   * Walks the slice until the minute is done, a newer offer owns it, or `stop()` turns true (checked
   * at every step boundary and while waiting). Throws when an operation kept failing beyond the
   * failure budget; the cursor then holds the last fully acknowledged step.
   */
  async walk(slice: SliceMessage, stop: () => boolean): Promise<WalkResult> {
    const run = new SliceRun(slice, this.deps, this.options, stop, this.logger);
    try {
      return await run.walk();
    } catch (e) {
      if (e instanceof Superseded) return 'superseded';
      if (e instanceof StopRequested) return 'stopped';
      throw e;
    }
  }
}

/** The state of one walk of one slice message. */
class SliceRun {
  private readonly minuteEnd: number;
  private readonly label: string;
  private readonly leaseEveryMs: number;
  private readonly budgetMs: number;
  /** Fire ids whose task message the broker acknowledged during this run. */
  private readonly published = new Set<string>();
  /** Fires read from MySQL by reconciling, by step number (relative to runStart), not yet walked. */
  private readonly plan = new Map<number, Fire[]>();
  private readonly planned = new Set<string>();
  /** Last warning per operation, so an outage logs every LOG_EVERY_MS instead of every step. */
  private readonly lastWarned = new Map<string, number>();
  private runStart = 0;
  private nextExtendAt = 0;
  private nextReconcileAt = 0;
  /** End of the range the last reconcile read: the walk reconciles again before it passes it. */
  private reconciledUntil = 0;

  constructor(
    private readonly slice: SliceMessage,
    private readonly deps: SliceWalkerDeps,
    private readonly options: SliceWalkerOptions,
    private readonly stop: () => boolean,
    private readonly logger: Logger,
  ) {
    this.minuteEnd = slice.minute + MINUTE_MS;
    this.label = `slice ${new Date(slice.minute).toISOString()}#${slice.bucket}/${slice.buckets}`;
    this.leaseEveryMs = Math.max(1, Math.floor(options.leaseMs / 3));
    this.budgetMs = options.failureBudgetMs ?? options.leaseMs;
  }

  private get now(): number {
    return this.deps.clock.now();
  }

  async walk(): Promise<WalkResult> {
    const { minute } = this.slice;
    await this.keepLease(); // fencing first: a superseded message does nothing
    this.runStart = await this.startPoint();
    if (this.runStart > minute) this.logger.debug(`${this.label}: resuming at +${this.runStart - minute} ms`);
    if (this.runStart < this.minuteEnd) await this.reconcile(this.runStart);
    for (let t = this.runStart; t < this.minuteEnd; ) {
      await this.pause(t - this.options.leadMs);
      const end = this.stepEnd(t);
      // Only when the reconcile ahead (below) failed or could not run: the step's range must be read first.
      if (end > this.reconciledUntil) await this.reconcile(t);
      const fires = await this.readStep(t, end);
      if (fires.length > 0) {
        await this.publishAll(fires);
        this.deps.metrics.stepLag.observe(Math.max(0, this.now - (t - this.options.leadMs)) / 1_000);
      }
      await this.writeCursor(end);
      if (end < this.minuteEnd && this.reconcileNow(t, end)) await this.reconcile(end);
      t = end;
    }
    await this.finish();
    return 'finished';
  }

  /**
   * Where the step that starts at `t` ends: one step, or, when the walk is behind (it started or resumed
   * late: after downtime, or in the current minute after a restart), every step already due at once, up to
   * reconcileMs of them. One read and its messages in parallel instead of a round trip per 200 ms step:
   * a trigger started 50 s into a minute walked 250 steps of it, one after the other, before the steps due
   * now (the catch-up bench's fire due 2-3 s after the start went out 1.3-1.5 s late).
   */
  private stepEnd(t: number): number {
    const { stepMs, leadMs, reconcileMs } = this.options;
    const due = Math.floor(Math.max(0, this.now + leadMs - t) / stepMs);
    const most = Math.max(1, Math.floor(reconcileMs / stepMs));
    return Math.min(t + Math.min(due + 1, most) * stepMs, this.minuteEnd);
  }

  /**
   * Whether to reconcile after the step [t, next) went out: when reconcileMs passed since the last one,
   * or the walk is within RECONCILE_AHEAD_MS of the end of the range it read; then only after a step
   * that starts on a whole second (unless overdue by a second or the next step needs it), so the read
   * runs ~500 ms before that second, after its messages went out and before the executors claim and
   * call its fires. Cron fires are due on whole seconds: a reconcile before a step's publish held that
   * step's messages back, and all the slices of a minute reconcile together (1,000 fires/s: 10 slices
   * read 10,000 rows every 10 s), which slowed the executor's claims of the instant next to it from
   * ~45 ms to 100-200 ms.
   */
  private reconcileNow(t: number, next: number): boolean {
    const overdue = this.now - this.nextReconcileAt;
    const within = (ms: number) => this.reconciledUntil < this.minuteEnd && next + ms > this.reconciledUntil;
    if (overdue < 0 && !within(RECONCILE_AHEAD_MS)) return false;
    return t % 1_000 === 0 || overdue >= 1_000 || within(this.options.stepMs);
  }

  /** The cursor, clamped to the minute; the minute's start when there is none (or Redis fails). */
  private async startPoint(): Promise<number> {
    const { minute, bucket } = this.slice;
    try {
      const cursor = await this.deps.state.readCursor(minute, bucket);
      if (cursor === null) return minute;
      return Math.min(Math.max(cursor, minute), this.minuteEnd);
    } catch (e) {
      // Walking from the start republishes fires; while Redis fails the steps come from MySQL,
      // which holds only the fires not yet claimed, and the executor's claim fences the rest.
      this.error('cursor', `reading the cursor failed, walking from the minute's start`, e);
      return minute;
    }
  }

  /** Extends the slice lock when due. Throws Superseded when a newer offer owns the slice. */
  private async keepLease(): Promise<void> {
    if (this.now < this.nextExtendAt) return;
    let result: LockTokenExtension;
    try {
      result = await this.deps.state.extend(this.slice, this.options.leaseMs);
    } catch (e) {
      // Cannot tell whether the slice is still ours: keep walking (a duplicate walk is fenced by the
      // executor's claim) and ask again soon.
      this.error('extend', 'extending the slice lock failed', e);
      this.nextExtendAt = this.now + Math.min(1_000, this.leaseEveryMs);
      return;
    }
    if (result === 'lost') {
      this.logger.log(`${this.label}: superseded (the lock carries another token or the slice is done); stopping`);
      throw new Superseded();
    }
    if (result === 'reclaimed') this.logger.warn(`${this.label}: the slice lock had expired and was free; took it back`);
    this.nextExtendAt = this.now + this.leaseEveryMs;
  }

  /** Waits until `until` (not at all when it passed), keeping the lease; throws on stop / superseded. */
  private async pause(until: number): Promise<void> {
    for (;;) {
      if (this.stop()) throw new StopRequested();
      await this.keepLease();
      const now = this.now;
      if (now >= until) return;
      await this.deps.clock.sleep(Math.max(1, Math.min(until - now, this.nextExtendAt - now, POLL_MS)));
    }
  }

  /** Runs `fn` until it succeeds, backing off; gives up (rethrows) once it failed for the budget. */
  private async retrying<T>(operation: string, what: string, fn: () => Promise<T>): Promise<T> {
    const started = this.now;
    let delay = BACKOFF_FIRST_MS;
    for (;;) {
      try {
        return await fn();
      } catch (e) {
        this.error(operation, what, e);
        if (this.now - started >= this.budgetMs) throw new Error(`${this.label}: ${what} kept failing for ${this.budgetMs} ms: ${message(e)}`);
        await this.pause(this.now + delay);
        delay = Math.min(delay * 2, BACKOFF_MAX_MS);
      }
    }
  }

  /**
   * Adds the pending rows of [fromMs, fromMs + reconcileMs) (within the minute) to the plan; the walk
   * reconciles again every reconcileMs and before it passes that range, so each reconcile reads about
   * reconcileMs of fires, not the rest of the minute. A minute already over is read to its end at once:
   * a late walk (the scheduler's lookback after downtime or on a fresh start: 60 minutes, mostly empty)
   * read each minute and bucket in 6 queries, 96 % of them finding nothing (a quarter of MariaDB's
   * query time in a 2,000 fires/s bench run). A failure is logged and retried soon.
   */
  private async reconcile(fromMs: number): Promise<void> {
    const { bucket, buckets } = this.slice;
    const toMs = this.minuteEnd <= this.now ? this.minuteEnd : Math.min(this.minuteEnd, fromMs + this.options.reconcileMs);
    try {
      const rows = await this.deps.mysql.pendingInSlice({ fromMs, toMs, bucket, buckets });
      this.reconciledUntil = toMs;
      for (const row of rows) {
        const id = fireId(row.timerId, row.runAt);
        if (row.runAt < fromMs || row.runAt >= toMs || this.published.has(id) || this.planned.has(id)) continue;
        const step = Math.floor((row.runAt - this.runStart) / this.options.stepMs);
        let fires = this.plan.get(step);
        if (!fires) this.plan.set(step, (fires = []));
        fires.push({ ...row, id, source: 'mysql' });
        this.planned.add(id);
      }
      this.nextReconcileAt = this.now + this.options.reconcileMs;
    } catch (e) {
      this.error('reconcile', 'reading pending rows from MySQL failed', e);
      this.nextReconcileAt = this.now + Math.min(1_000, this.options.reconcileMs);
    }
  }

  /** The fires of [t, end) not yet published: the index's, plus the plan's (MySQL) not in the index. */
  private async readStep(t: number, end: number): Promise<Fire[]> {
    const { minute, bucket, buckets } = this.slice;
    const planned: Fire[] = [];
    for (let step = Math.floor((t - this.runStart) / this.options.stepMs); this.runStart + step * this.options.stepMs < end; step++) {
      planned.push(...(this.plan.get(step) ?? []));
      this.plan.delete(step);
    }
    const found = await this.retrying('read', `reading the fires of [+${t - minute}, +${end - minute}) ms`, async () => {
      try {
        return (await this.deps.index.due(minute, bucket, t, end)).map((f): Fire => ({ ...f, id: fireId(f.timerId, f.runAt), source: 'index' }));
      } catch (e) {
        this.deps.metrics.mysqlFallbacks.inc({ reason: 'redis_error' });
        this.error('read', 'reading the slice index failed, reading MySQL instead', e);
        const rows = await this.deps.mysql.pendingInSlice({ fromMs: t, toMs: end, bucket, buckets });
        return rows.map((r): Fire => ({ ...r, id: fireId(r.timerId, r.runAt), source: 'mysql' }));
      }
    });
    const out = new Map<string, Fire>();
    for (const f of [...found, ...planned]) {
      this.planned.delete(f.id);
      if (f.runAt >= t && f.runAt < end && !this.published.has(f.id) && !out.has(f.id)) out.set(f.id, f);
    }
    return [...out.values()];
  }

  /**
   * Publishes the fires in messages of up to batchMax, concurrently, and waits for every broker ack; the
   * messages that failed are sent again (the same fires: a fire is in one message per attempt).
   */
  private async publishAll(fires: Fire[]): Promise<void> {
    const size = this.options.batchMax ?? 1;
    let pending: Fire[][] = [];
    for (let i = 0; i < fires.length; i += size) pending.push(fires.slice(i, i + size));
    await this.retrying('publish', `publishing ${fires.length} fire(s)`, async () => {
      const results = await Promise.allSettled(pending.map((chunk) => this.deps.publisher.publishBatch(chunk.map(taskOf))));
      const failed: Fire[][] = [];
      let firstError: unknown;
      results.forEach((r, i) => {
        const chunk = pending[i];
        if (r.status === 'fulfilled') {
          for (const f of chunk) {
            this.published.add(f.id);
            this.deps.metrics.firesPublished.inc({ source: f.source });
          }
        } else {
          failed.push(chunk);
          firstError ??= r.reason;
        }
      });
      pending = failed;
      if (failed.length > 0) throw new Error(`${failed.length} of ${results.length} message(s) failed: ${message(firstError)}`);
    });
  }

  private async writeCursor(at: number): Promise<void> {
    try {
      await this.deps.state.writeCursor(this.slice.minute, this.slice.bucket, at);
    } catch (e) {
      // Only the resume point suffers: a redelivery would republish from an older cursor.
      this.error('cursor', 'writing the cursor failed', e);
    }
  }

  private async finish(): Promise<void> {
    const { minute, bucket } = this.slice;
    await this.retrying('done', 'marking the slice done', () => this.deps.state.markDone(minute, bucket));
    try {
      await this.deps.state.release(this.slice);
    } catch (e) {
      this.error('release', 'releasing the slice lock failed (it expires with its lease)', e);
    }
  }

  private error(operation: string, what: string, e: unknown): void {
    this.deps.metrics.errors.inc({ operation });
    const now = this.now;
    const last = this.lastWarned.get(operation);
    if (last !== undefined && now - last < LOG_EVERY_MS) return;
    this.lastWarned.set(operation, now);
    this.logger.warn(`${this.label}: ${what}: ${message(e)}`);
  }
}

function taskOf(f: Fire): TaskMessage {
  return { timerId: f.timerId, runAt: f.runAt, fireId: f.id, attempt: 1 };
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
