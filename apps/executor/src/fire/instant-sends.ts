import { Injectable } from '@nestjs/common';

/**
 * How many fires reached their time and have not sent their call yet: the burst of a due instant
 * (1,000 fires at one second, sent over 256 connections as the receiver answers) is going out while
 * this is above zero. Work that can wait (outcome writes: OutcomeRecorder) waits for it, so the CPU
 * of the executor and of MariaDB goes to the calls then.
 */
@Injectable()
export class InstantSends {
  private pending = 0;
  private idle: (() => void)[] = [];

  /** A fire reached its time; the returned function says its call went out (or it ended without one). Idempotent. */
  begin(): () => void {
    this.pending++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      if (--this.pending > 0) return;
      const resume = this.idle;
      this.idle = [];
      for (const r of resume) r();
    };
  }

  get busy(): boolean {
    return this.pending > 0;
  }

  /** Resolves once no fire that reached its time waits to send its call, or after `maxMs`. */
  whenIdle(maxMs: number): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
