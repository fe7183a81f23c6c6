/**
 * Bookkeeping of a producer's sends, free of I/O: a FIFO of sends waiting for room, the sends in
 * flight on each connection (keyed by context, the id the broker echoes in its ack), the
 * `maxPendingMessages` window, send timeouts and flush watermarks.
 *
 * Invariant: the waiting FIFO is ordered by `seq`, and every send in flight is older than every
 * waiting one. Deadlines grow with `seq`, so expiring the FIFO stops at its first live entry.
 *
 * `complete`, `expire` and `drain` remove sends; the caller settles each removed send's promise
 * and then calls `settled(send)`, so flushes resolve after the sends they wait for.
 */
import type { MessageId } from './pulsar-client.interface';

export interface PendingSend {
  readonly seq: number;
  readonly context: string;
  readonly frame: string;
  /** Epoch ms after which the send fails; Infinity without a send timeout. */
  readonly deadline: number;
  resolve(messageId: MessageId): void;
  reject(error: Error): void;
}

interface FlushWaiter {
  seq: number;
  remaining: number;
  resolve(): void;
}

export class PendingSends {
  private waiting: PendingSend[] = [];
  private head = 0;
  private readonly inFlight: Map<string, PendingSend>[];
  private inFlightCount = 0;
  private flushWaiters: FlushWaiter[] = [];

  constructor(
    connections: number,
    /** Window: sends written but not yet acked, across all connections. */
    readonly maxInFlight: number,
  ) {
    if (!(connections >= 1) || !(maxInFlight >= 1)) throw new RangeError('connections and maxInFlight must be >= 1');
    this.inFlight = Array.from({ length: connections }, () => new Map<string, PendingSend>());
  }

  /** Sends not yet settled (waiting or in flight). */
  get outstanding(): number {
    return this.waitingCount + this.inFlightCount;
  }

  get waitingCount(): number {
    return this.waiting.length - this.head;
  }

  get inFlightTotal(): number {
    return this.inFlightCount;
  }

  inFlightOn(slot: number): number {
    return this.inFlight[slot].size;
  }

  enqueue(send: PendingSend): void {
    this.waiting.push(send);
  }

  /** The oldest waiting send, now in flight on `slot`; undefined when none waits or the window is full. */
  dispatch(slot: number): PendingSend | undefined {
    if (this.head >= this.waiting.length || this.inFlightCount >= this.maxInFlight) return undefined;
    const send = this.waiting[this.head];
    this.waiting[this.head++] = undefined as unknown as PendingSend;
    this.compact();
    this.inFlight[slot].set(send.context, send);
    this.inFlightCount++;
    return send;
  }

  /** Removes the send `context` in flight on `slot` (the broker answered); undefined if unknown (e.g. timed out). */
  complete(slot: number, context: string): PendingSend | undefined {
    const send = this.inFlight[slot].get(context);
    if (send === undefined) return undefined;
    this.inFlight[slot].delete(context);
    this.inFlightCount--;
    return send;
  }

  /** Connection `slot` was lost: its unacked sends go back to the head of the FIFO, oldest first. */
  requeue(slot: number): number {
    const map = this.inFlight[slot];
    if (map.size === 0) return 0;
    const back = [...map.values()];
    this.inFlightCount -= map.size;
    map.clear();
    this.waiting = back.concat(this.waiting.slice(this.head)).sort((a, b) => a.seq - b.seq);
    this.head = 0;
    return back.length;
  }

  /** Removes and returns every send whose deadline is at or before `now`. */
  expire(now: number): PendingSend[] {
    const expired: PendingSend[] = [];
    for (const map of this.inFlight) {
      for (const send of map.values()) {
        if (send.deadline <= now) {
          map.delete(send.context);
          this.inFlightCount--;
          expired.push(send);
        }
      }
    }
    while (this.head < this.waiting.length && this.waiting[this.head].deadline <= now) {
      expired.push(this.waiting[this.head]);
      this.waiting[this.head++] = undefined as unknown as PendingSend;
    }
    this.compact();
    return expired;
  }

  /** Removes and returns every outstanding send (used when the producer gives up). */
  drain(): PendingSend[] {
    const all: PendingSend[] = [];
    for (const map of this.inFlight) {
      all.push(...map.values());
      map.clear();
    }
    all.push(...this.waiting.slice(this.head));
    this.waiting = [];
    this.head = 0;
    this.inFlightCount = 0;
    return all;
  }

  /** Resolves once every send enqueued so far (up to `seq`) has settled. */
  flush(seq: number): Promise<void> {
    const remaining = this.outstanding;
    if (remaining === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.flushWaiters.push({ seq, remaining, resolve }));
  }

  /** Counts a removed send as settled for the flushes waiting on it. */
  settled(send: PendingSend): void {
    if (this.flushWaiters.length === 0) return;
    for (const waiter of this.flushWaiters) {
      if (send.seq <= waiter.seq) waiter.remaining--;
    }
    const done = this.flushWaiters.filter((w) => w.remaining <= 0);
    if (done.length === 0) return;
    this.flushWaiters = this.flushWaiters.filter((w) => w.remaining > 0);
    for (const waiter of done) waiter.resolve();
  }

  /** Drops the consumed prefix of the FIFO now and then so it does not grow without bound. */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
  }
}
