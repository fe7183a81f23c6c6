import { Injectable } from '@nestjs/common';
import { ExecutorConfig } from '../config/executor.env';

/**
 * How many fires a lane takes in from its messages per slot, from the message's parse to each fire's
 * end; a further message waits, holding its handler, so the rest of a spike stays in the broker rather
 * than in the heap (docs/benchmarks.md, "Measurements behind the code"). 2 keeps a slot's worth queued
 * behind the busy ones, fires waiting for their time included: the next second's fires arrive while
 * this second's hold their slots.
 */
export const INTAKE_FIRES_PER_SLOT = 2;

/**
 * At most `size` fires of one lane worked on at a time, the rest waiting in arrival order. A task
 * message may carry many fires (`{tasks: [...]}`), so the transport's concurrency counts messages and
 * this counts fires: a fire holds its slot from admission to its recorded outcome, like a handler did
 * when every message carried one fire. Messages' fires are taken in up to {@link intakeLimit}
 * ({@link takeIn}), in arrival order.
 */
export class FireLane {
  /** Most fires taken in at once; a message larger than that is taken in alone. */
  readonly intakeLimit: number;
  private active = 0;
  /** Fires taken in ({@link takeIn}) and not yet given back ({@link giveBack}). */
  private held = 0;
  /** Messages waiting to be taken in, oldest first. */
  private intake: { fires: number; resume: () => void }[] = [];
  private intakeHead = 0;
  /** Waiting fires, oldest first: a queue with a moving head (a shift() per fire is O(n) at 100,000 waiting). */
  private waiting: (() => void)[] = [];
  private head = 0;
  /** Callers of {@link whenNoneWaiting}, resumed when the last waiting fire got its slot. */
  private drained: (() => void)[] = [];

  /** `yieldTo`: a lane whose waiting fires go first: a fire of this one starts only when none waits there. */
  constructor(
    readonly size: number,
    private readonly yieldTo?: FireLane,
  ) {
    this.intakeLimit = size * INTAKE_FIRES_PER_SLOT;
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length - this.head;
  }

  /** Fires taken in and not given back yet. */
  get takenIn(): number {
    return this.held;
  }

  /** Messages waiting to be taken in. */
  get waitingToTakeIn(): number {
    return this.intake.length - this.intakeHead;
  }

  /**
   * Takes in a message of `fires` fires: at once (undefined) when they fit under {@link intakeLimit} and no
   * earlier message waits, else a promise that resolves in arrival order once they fit (or nothing else is
   * held). Give each fire back with {@link giveBack} when it ended.
   */
  takeIn(fires: number): Promise<void> | undefined {
    if (this.waitingToTakeIn === 0 && this.fits(fires)) {
      this.held += fires;
      return undefined;
    }
    return new Promise<void>((resume) => this.intake.push({ fires, resume }));
  }

  giveBack(fires = 1): void {
    this.held -= fires;
    while (this.intakeHead < this.intake.length && this.fits(this.intake[this.intakeHead].fires)) {
      const next = this.intake[this.intakeHead++];
      this.held += next.fires;
      next.resume();
    }
    if (this.intakeHead === this.intake.length) {
      this.intake = [];
      this.intakeHead = 0;
    }
  }

  private fits(fires: number): boolean {
    return this.held === 0 || this.held + fires <= this.intakeLimit;
  }

  /** Resolves once no fire waits for a slot of this lane (at once when none does). */
  whenNoneWaiting(): Promise<void> {
    if (this.queued === 0) return Promise.resolve();
    return new Promise<void>((resume) => this.drained.push(resume));
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.yieldTo) await this.yieldTo.whenNoneWaiting();
    if (this.active < this.size) this.active++;
    else await new Promise<void>((resume) => this.waiting.push(resume)); // the slot is handed over, still counted
    try {
      return await work();
    } finally {
      this.handOver();
    }
  }

  private handOver(): void {
    if (this.head === this.waiting.length) {
      this.active--;
      return;
    }
    const next = this.waiting[this.head++];
    if (this.head >= 1_024 && this.head * 2 >= this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    next();
    if (this.head === this.waiting.length && this.drained.length > 0) {
      const resume = this.drained;
      this.drained = [];
      for (const r of resume) r();
    }
  }
}

/**
 * The executor's lanes, one per task topic: fires due now (`timer-tasks`) and retries and rechecks
 * (`timer-task-retries`) get TIMER_EXECUTOR_CONCURRENCY slots each, catch-up a tenth of it, and a
 * catch-up fire starts only when no fire due now waits for a slot: fewer slots alone did not keep a
 * draining backlog off the fires due now (docs/benchmarks.md, "Measurements behind the code").
 */
@Injectable()
export class FireLanes {
  readonly tasks: FireLane;
  readonly retries: FireLane;
  readonly catchUp: FireLane;

  constructor(config: ExecutorConfig) {
    this.tasks = new FireLane(config.concurrency);
    this.retries = new FireLane(config.concurrency);
    this.catchUp = new FireLane(catchUpConcurrency(config.concurrency), this.tasks);
  }
}

/** The catch-up lane's share of the executor's concurrency. */
export function catchUpConcurrency(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 10));
}
