import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** One callback request as the receiver saw it. Times are epoch ms (Date.now()). */
export interface Delivery {
  timerId: string;
  /** `X-Timer-Fire-Id`: `<timerId>-<runAtMs>`. */
  fireId: string;
  /** `X-Timer-Attempt`, 1-based. */
  attempt: number;
  /** `X-Timer-Scheduled-At`, epoch ms. */
  scheduledAt: number;
  /** `X-Timer-Jittered-At`, epoch ms: the scheduled time plus the fire's jitter. */
  jitteredAt: number;
  receivedAt: number;
  method: string;
  path: string;
  /** Only when the receiver was started with `keepBodies`. */
  body?: string;
  /** Every request header (lower-case names), only with `keepBodies`. */
  headers?: Record<string, string | string[] | undefined>;
  /** `X-Timer-Backfill: 1`: a fire of a backfill. */
  backfill: boolean;
  /** Status the receiver answered (0 until it answered). */
  status: number;
  /**
   * True when the caller went away before the answer was written (e.g. the executor was killed
   * while the receiver held the request): the caller cannot know the outcome, so a redelivery of
   * this fire is the at-least-once contract at work, not a duplicate.
   */
  aborted: boolean;
  /** `X-Timer-Redelivery: 1`: the service says an earlier delivery of this attempt may have reached us. */
  redelivery: boolean;
  /** `X-Timer-Signature`, when the request was signed. */
  signature?: string;
}

/** What to answer to one delivery: a status (default 200) after an optional delay. */
export interface Reply {
  status?: number;
  delayMs?: number;
  /** Extra response headers (e.g. `retry-after`; a `content-type` replaces text/plain). */
  headers?: Record<string, string>;
  /** The response body; default `ok` (2xx) or `no`. */
  body?: string;
}
export type Responder = (d: Delivery) => Reply | undefined;

export interface ReceiverOptions {
  keepBodies?: boolean;
  /** Keep each Delivery in `deliveries` (default true); the bench may only want `onDelivery`. */
  record?: boolean;
  onDelivery?: (d: Delivery) => void;
}

/**
 * A local HTTP endpoint on 127.0.0.1 that records every timer callback (fire id, attempt,
 * scheduled-at header, receive time) and answers what its responders say (default 200 at once).
 */
export class Receiver {
  readonly deliveries: Delivery[] = [];
  /** Requests received and not answered yet. */
  inFlight = 0;
  /** Every request, with or without the X-Timer headers. */
  requests = 0;
  private readonly responders: Responder[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly options: ReceiverOptions,
  ) {}

  static async start(options: ReceiverOptions = {}): Promise<Receiver> {
    const holder: { receiver?: Receiver } = {};
    const server = createServer((req, res) => holder.receiver!.handle(req, res));
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = 0;
    server.maxRequestsPerSocket = 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    holder.receiver = new Receiver(server, (server.address() as AddressInfo).port, { record: true, ...options });
    return holder.receiver;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Adds a responder (the first that answers wins); returns a function removing it. */
  respond(fn: Responder): () => void {
    this.responders.push(fn);
    return () => {
      const i = this.responders.indexOf(fn);
      if (i >= 0) this.responders.splice(i, 1);
    };
  }

  /** Answers `status` to every delivery of `timerId`. */
  failTimer(timerId: string, status = 500): () => void {
    return this.respond((d) => (d.timerId === timerId ? { status } : undefined));
  }

  /** Holds every delivery of the given timers `delayMs` before answering 200. */
  delayTimers(timerIds: Iterable<string>, delayMs: number): () => void {
    const set = new Set(timerIds);
    return this.respond((d) => (set.has(d.timerId) ? { delayMs } : undefined));
  }

  forTimer(timerId: string): Delivery[] {
    return this.deliveries.filter((d) => d.timerId === timerId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const receivedAt = Date.now();
    this.requests++;
    const h = req.headers;
    const d: Delivery = {
      timerId: String(h['x-timer-id'] ?? ''),
      fireId: String(h['x-timer-fire-id'] ?? ''),
      attempt: Number(h['x-timer-attempt'] ?? NaN),
      scheduledAt: Number(h['x-timer-scheduled-at'] ?? NaN),
      jitteredAt: Number(h['x-timer-jittered-at'] ?? NaN),
      receivedAt,
      method: req.method ?? '',
      path: req.url ?? '',
      status: 0,
      aborted: false,
      redelivery: h['x-timer-redelivery'] === '1',
      backfill: h['x-timer-backfill'] === '1',
      ...(this.options.keepBodies ? { headers: { ...h } } : {}),
      signature: typeof h['x-timer-signature'] === 'string' ? h['x-timer-signature'] : undefined,
    };
    if (this.options.record !== false) this.deliveries.push(d);
    this.options.onDelivery?.(d);
    this.inFlight++;
    let reply: Reply | undefined;
    for (const r of this.responders) if ((reply = r(d))) break;
    const status = reply?.status ?? 200;
    const answer = () => {
      if (res.destroyed || req.socket.destroyed) {
        d.aborted = true;
        return;
      }
      d.status = status;
      const body = reply?.body ?? (status < 300 ? 'ok' : 'no');
      res.writeHead(status, { 'content-type': 'text/plain', ...reply?.headers, 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    };
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      this.inFlight--;
    };
    res.once('close', () => {
      if (!res.writableFinished) d.aborted = true;
      settle();
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      if (this.options.keepBodies) chunks.push(c);
    });
    req.once('end', () => {
      if (this.options.keepBodies) d.body = Buffer.concat(chunks).toString('utf8');
      if (reply?.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  }
}
