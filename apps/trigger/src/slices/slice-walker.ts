import { Logger } from '@nestjs/common';
import { Clock } from '@timer/platform';
import { FireRef, fireId, MAX_TASKS_PER_MESSAGE, MINUTE_MS, SliceMessage, TaskMessage } from '@timer/contracts';
import { taskMessage } from '@timer/fire';
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
   * up to this many: the broker and both WebSocket clients pay per message (docs/architecture.md, "trigger").
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
}

/**
 * Walks one slice (minute, bucket): publishes one task message per fire, step by step, each step
 * `leadMs` before it starts, and keeps the cursor so a redelivered slice resumes (docs/architecture.md,
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
  /**
   * Fires read from MySQL by reconciling, by step number (relative to runStart) and fire id, not yet walked.
   * Keyed once here, ahead of the step, so the step's index read is matched against it by id instead of
   * merged with it: at a large instant that merge took the trigger's core for a good part of a second
   * (docs/benchmarks.md, "Measurements behind the code").
   * Nothing is kept of the fires already published: steps do not overlap, and both reads skip what is
   * behind the walk.
   */
  private readonly plan = new Map<number, Map<string, Fire>>();
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
      if ((await this.publishStep(t, end)) > 0) {
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
   * a trigger started late in a minute would walk all its past steps one after the other before the
   * steps due now, which then went out late (docs/benchmarks.md, "Measurements behind the code").
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
   * step's messages back, and all the slices of a minute reconcile together, which slowed the
   * executor's claims of the instant next to it (docs/benchmarks.md, "Measurements behind the code").
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
   * read each minute and bucket in 6 queries, nearly all of them finding nothing, a large share of
   * MariaDB's query time (docs/benchmarks.md, "Measurements behind the code"). A failure is logged
   * and retried soon.
   */
  private async reconcile(fromMs: number): Promise<void> {
    const { bucket, buckets } = this.slice;
    const toMs = this.minuteEnd <= this.now ? this.minuteEnd : Math.min(this.minuteEnd, fromMs + this.options.reconcileMs);
    try {
      const rows = await this.deps.mysql.pendingInSlice({ fromMs, toMs, bucket, buckets });
      this.reconciledUntil = toMs;
      for (const row of rows) {
        if (row.runAt < fromMs || row.runAt >= toMs) continue;
        const id = fireId(row.timerId, row.runAt);
        const step = this.stepOf(row.runAt);
        let fires = this.plan.get(step);
        if (!fires) this.plan.set(step, (fires = new Map()));
        if (!fires.has(id)) fires.set(id, { timerId: row.timerId, runAt: row.runAt, id });
      }
      this.nextReconcileAt = this.now + this.options.reconcileMs;
    } catch (e) {
      this.error('reconcile', 'reading pending rows from MySQL failed', e);
      this.nextReconcileAt = this.now + Math.min(1_000, this.options.reconcileMs);
    }
  }

  private stepOf(runAt: number): number {
    return Math.floor((runAt - this.runStart) / this.options.stepMs);
  }

  /**
   * Publishes the fires of [t, end) and resolves, with their number, once the broker acked every message.
   * The plan's fires (MySQL rows the reconcile read ahead) go out at once, in messages of up to batchMax,
   * while the index is read; then the index's fires that the plan did not hold. A fire in both goes out
   * once. At a large instant the plan holds the whole step: sending only after the whole index had been
   * read and merged with it held the first messages well past the instant (issue 11,
   * docs/benchmarks.md, "Measurements behind the code").
   */
  private async publishStep(t: number, end: number): Promise<number> {
    const planned = new Map<number, Map<string, Fire>>();
    for (let step = this.stepOf(t); this.runStart + step * this.options.stepMs < end; step++) {
      const fires = this.plan.get(step);
      if (fires === undefined) continue;
      planned.set(step, fires);
      this.plan.delete(step);
    }
    // Settled into a value at once: the read may fail while the plan's messages go out, and must not be an unhandled rejection.
    const reading = this.readStep(t, end).then(
      (found) => ({ found }),
      (error: unknown) => ({ error }),
    );
    const messages = new StepMessages(this.deps.publisher, this.options.batchMax ?? 1);
    // Counted by where each fire was found, as when the index came first: a planned fire the index also holds is the index's.
    let fromIndex = 0;
    let mysqlOnly = 0;
    for (const fires of planned.values()) {
      for (const f of fires.values()) {
        mysqlOnly++;
        if (messages.add(f)) await nextTurn();
      }
    }
    messages.flush(); // not held for the index's fires: those the plan had are most of them, or all
    const read = await reading;
    if ('error' in read) {
      await this.publishRest(messages); // the plan's messages are out: wait for them before giving up
      throw read.error;
    }
    const { source, refs } = read.found;
    for (const ref of refs) {
      if (ref.runAt < t || ref.runAt >= end) continue;
      const id = fireId(ref.timerId, ref.runAt);
      if (planned.get(this.stepOf(ref.runAt))?.delete(id)) {
        if (source === 'index') {
          mysqlOnly--;
          fromIndex++;
        }
        continue;
      }
      if (source === 'index') fromIndex++;
      else mysqlOnly++;
      if (messages.add({ timerId: ref.timerId, runAt: ref.runAt, id })) await nextTurn();
    }
    await this.publishRest(messages);
    if (fromIndex > 0) this.deps.metrics.firesPublished.inc({ source: 'index' }, fromIndex);
    if (mysqlOnly > 0) this.deps.metrics.firesPublished.inc({ source: 'mysql' }, mysqlOnly);
    return fromIndex + mysqlOnly;
  }

  /** The fires of [t, end) in the index, or in MySQL while the index cannot be read. */
  private async readStep(t: number, end: number): Promise<{ source: FireSource; refs: FireRef[] }> {
    const { minute, bucket, buckets } = this.slice;
    return this.retrying('read', `reading the fires of [+${t - minute}, +${end - minute}) ms`, async () => {
      try {
        return { source: 'index', refs: await this.deps.index.due(minute, bucket, t, end) };
      } catch (e) {
        this.deps.metrics.mysqlFallbacks.inc({ reason: 'redis_error' });
        this.error('read', 'reading the slice index failed, reading MySQL instead', e);
        return { source: 'mysql', refs: await this.deps.mysql.pendingInSlice({ fromMs: t, toMs: end, bucket, buckets }) };
      }
    });
  }

  /**
   * Sends the last partly filled message, waits for every broker ack, and sends the messages that failed
   * again (the same fires: a fire is in one message per attempt) until they are acked or the budget is spent.
   */
  private async publishRest(messages: StepMessages): Promise<void> {
    messages.flush();
    let pending = messages.sent;
    let again = false;
    await this.retrying('publish', `publishing ${messages.fires} fire(s)`, async () => {
      if (again) pending = pending.map((m) => messages.send(m.fires));
      again = true;
      const errors = await Promise.all(pending.map((m) => m.failed));
      const failed = pending.filter((_, i) => errors[i] !== undefined);
      const first = errors.find((e) => e !== undefined);
      if (failed.length > 0) {
        pending = failed;
        throw new Error(`${failed.length} of ${errors.length} message(s) failed: ${message(first?.error)}`);
      }
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

/** Messages sent between two turns of the event loop, so the socket's acks and the executor's reads are not held by a long step. */
const MESSAGES_PER_TURN = 10;

interface SentMessage {
  fires: Fire[];
  /** Resolves (never rejects) once the broker answered: undefined when it acked, the error when it did not. */
  failed: Promise<{ error: unknown } | undefined>;
}

/** A step's fires, sent in messages of up to `size` as they are added. */
class StepMessages {
  readonly sent: SentMessage[] = [];
  fires = 0;
  private chunk: Fire[] = [];

  constructor(
    private readonly publisher: TaskPublisher,
    private readonly size: number,
  ) {}

  /** Adds a fire, sending its message when full; true every MESSAGES_PER_TURN messages: time to yield. */
  add(f: Fire): boolean {
    this.fires++;
    this.chunk.push(f);
    if (this.chunk.length < this.size) return false;
    this.sent.push(this.send(this.chunk));
    this.chunk = [];
    return this.sent.length % MESSAGES_PER_TURN === 0;
  }

  flush(): void {
    if (this.chunk.length === 0) return;
    this.sent.push(this.send(this.chunk));
    this.chunk = [];
  }

  send(fires: Fire[]): SentMessage {
    return {
      fires,
      failed: this.publisher.publishBatch(fires.map((f) => taskMessage(f))).then(
        () => undefined,
        (error: unknown) => ({ error }),
      ),
    };
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
