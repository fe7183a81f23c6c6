import { Injectable } from '@nestjs/common';
import { ExecutorConfig } from '../config/executor.env';

/**
 * At most `size` fires of one lane worked on at a time, the rest waiting in arrival order. A task
 * message may carry many fires (`{tasks: [...]}`), so the transport's concurrency counts messages and
 * this counts fires: a fire holds its slot from admission to its recorded outcome, like a handler did
 * when every message carried one fire.
 */
export class FireLane {
  private active = 0;
  /** Waiting fires, oldest first: a queue with a moving head (a shift() per fire is O(n) at 100,000 waiting). */
  private waiting: (() => void)[] = [];
  private head = 0;

  constructor(readonly size: number) {}

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length - this.head;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
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
  }
}

/**
 * The executor's lanes, one per task topic, sized as the transport's handlers were: fires due now
 * (`timer-tasks`) and retries and rechecks (`timer-task-retries`) get TIMER_EXECUTOR_CONCURRENCY each,
 * the catch-up lane a tenth of it, so catch-up work never takes more than that from fires due now.
 */
@Injectable()
export class FireLanes {
  readonly tasks: FireLane;
  readonly retries: FireLane;
  readonly catchUp: FireLane;

  constructor(config: ExecutorConfig) {
    this.tasks = new FireLane(config.concurrency);
    this.retries = new FireLane(config.concurrency);
    this.catchUp = new FireLane(catchUpConcurrency(config.concurrency));
  }
}

/** The catch-up lane's share of the executor's concurrency. */
export function catchUpConcurrency(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 10));
}
