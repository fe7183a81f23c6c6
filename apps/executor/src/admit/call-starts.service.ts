import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { CALL_MARKS_CHUNK, CallMarks } from '@timer/redis';
import { ExecutorConfig } from '../config/executor.env';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { ExecutorLiveness, LIVENESS_BEAT_MS } from './executor-liveness.service';
import { InstantDiagnostics } from '../shared/instant-diagnostics';

/** Marks per script call: bounds one command's arguments and how long it holds Redis. */
const MARK_BATCH = 1_000;

interface Waiter {
  index: number;
  resolve: (go: boolean) => void;
}

/**
 * Which of this process's claims have started their callback, so that a fire taken over from a dead
 * executor is flagged `X-Timer-Redelivery: 1` and counted only when the dead one's call may have
 * reached the receiver (docs/architecture.md, "Failover bounds"). Claim tokens are
 * `<processId>:<seq>`; `seq` picks a bit of a chunk in {@link CallMarks}. The mark is written, and
 * acknowledged by Redis, before the call goes out: the marks of one event-loop turn share one script
 * call, so a fire pays one Redis round trip and no MySQL write. When a mark cannot be written the call
 * goes out all the same (at least once) and the chunk is closed, so its claims count as called.
 */
@Injectable()
export class CallStarts implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CallStarts.name);
  private seq = 0;
  private pending = new Map<number, Waiter[]>();
  private scheduled = false;
  /** Chunks whose marks may be incomplete and whose opening bit is still to be cleared. */
  private readonly toClose = new Set<number>();
  /** The latest chunk whose opening Redis acknowledged: a chunk still being opened is not judged gone. */
  private opened = -1;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly marks: CallMarks,
    private readonly liveness: ExecutorLiveness,
    private readonly config: ExecutorConfig,
    private readonly metrics: ExecutorMetrics,
    @Optional() private readonly diag?: InstantDiagnostics,
  ) {}

  /** How long a chunk outlives its last write: past any lease of its claims (an extended one proves nothing after). */
  get ttlMs(): number {
    return 2 * this.config.leaseMs + 60_000;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.beat(), LIVENESS_BEAT_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** A new claim token; the first of a chunk opens the chunk, before any of its claims exists. */
  nextToken(): string {
    const seq = this.seq++;
    if (seq % CALL_MARKS_CHUNK === 0) this.open(chunkOf(seq));
    return this.liveness.token(seq);
  }

  /**
   * Marks the claim's call as started; resolves once Redis holds the mark. False: the claim was taken
   * over (this process was taken for dead) and the call must not go out.
   */
  beforeCall(token: string): Promise<boolean> {
    const seq = seqOf(token);
    if (seq === null) return Promise.resolve(true);
    const chunk = chunkOf(seq);
    return new Promise<boolean>((resolve) => {
      const waiters = this.pending.get(chunk);
      const w = { index: seq % CALL_MARKS_CHUNK, resolve };
      if (waiters) waiters.push(w);
      else this.pending.set(chunk, [w]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * `ownToken` took the fire over from `deadToken`'s dead process: fences the dead claim off and says
   * whether its call may have started. When it may, the new claim carries that on (marked as called at
   * once), so a second takeover, should this process die before its own call, flags it too.
   */
  async takenOver(deadToken: string, ownToken: string): Promise<boolean> {
    const cut = deadToken.lastIndexOf(':');
    const seq = seqOf(deadToken);
    let mayHaveCalled = true;
    if (cut > 0 && seq !== null) {
      try {
        const found = await this.marks.takeOver(deadToken.slice(0, cut), chunkOf(seq), seq % CALL_MARKS_CHUNK, this.ttlMs);
        this.metrics.takeovers.inc({ call: found });
        mayHaveCalled = found !== 'not_called';
      } catch (e) {
        this.metrics.takeovers.inc({ call: 'unknown' });
        this.logger.warn(`reading whether ${deadToken} started its call failed (counted as started): ${(e as Error).message}`);
      }
    } else {
      this.metrics.takeovers.inc({ call: 'unknown' });
    }
    if (mayHaveCalled) await this.carry(ownToken);
    return mayHaveCalled;
  }

  /** This claim's fire may already have reached the receiver: its later takers must know it too. */
  async carry(ownToken: string): Promise<void> {
    await this.beforeCall(ownToken);
  }

  private flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = new Map();
    for (const [chunk, all] of pending) {
      for (let i = 0; i < all.length; i += MARK_BATCH) {
        const waiters = all.slice(i, i + MARK_BATCH);
        this.diag?.did('mark-flush', waiters.length);
        this.marks.markMany(this.liveness.processId, chunk, waiters.map((w) => w.index), this.ttlMs).then(
          (go) => waiters.forEach((w, j) => w.resolve(go[j] ?? true)),
          (e: unknown) => {
            this.logger.warn(`marking ${waiters.length} calls as started failed; they go out, and chunk ${chunk}'s claims count as called: ${(e as Error).message}`);
            this.lose(chunk);
            waiters.forEach((w) => w.resolve(true));
          },
        );
      }
    }
  }

  /** The chunk's marks may be incomplete: close it (now and until that works) and hand out claims from a new one. */
  private lose(chunk: number): void {
    this.toClose.add(chunk);
    void this.closePending();
    if (chunk === chunkOf(this.seq)) this.seq = (chunk + 1) * CALL_MARKS_CHUNK;
  }

  private open(chunk: number): void {
    this.marks.open(this.liveness.processId, chunk, this.ttlMs).then(
      () => (this.opened = Math.max(this.opened, chunk)),
      (e: unknown) => this.logger.warn(`opening call-mark chunk ${chunk} failed (its claims count as called): ${(e as Error).message}`),
    );
  }

  private async closePending(): Promise<void> {
    for (const chunk of [...this.toClose]) {
      try {
        await this.marks.close(this.liveness.processId, chunk);
        this.toClose.delete(chunk);
      } catch {
        // Redis is unreachable: the next beat tries again.
      }
    }
  }

  /** Every second: chunks left to close closed, the current and the previous chunk kept, a current chunk found gone replaced. */
  async beat(): Promise<void> {
    await this.closePending();
    const current = chunkOf(Math.max(0, this.seq - 1));
    try {
      if (current > 0) await this.marks.keep(this.liveness.processId, current - 1, this.ttlMs);
      const kept = await this.marks.keep(this.liveness.processId, current, this.ttlMs);
      if (!kept && current <= this.opened && this.seq > 0 && chunkOf(this.seq - 1) === current) {
        this.logger.warn(`call-mark chunk ${current} is gone from Redis (flushed or expired): its claims count as called, new claims use a new chunk`);
        this.seq = (current + 1) * CALL_MARKS_CHUNK;
      }
    } catch {
      // Redis unreachable: marks fail too and close their chunk.
    }
  }
}

function chunkOf(seq: number): number {
  return Math.floor(seq / CALL_MARKS_CHUNK);
}

/** The claim sequence number of a token `<processId>:<seq>`, or null when it is not one. */
function seqOf(token: string): number | null {
  const cut = token.lastIndexOf(':');
  if (cut <= 0) return null;
  const text = token.slice(cut + 1);
  if (!/^\d{1,15}$/.test(text)) return null;
  return Number(text);
}
