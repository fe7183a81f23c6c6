/**
 * One logical WebSocket session to the Pulsar WebSocket proxy that re-opens itself: exponential
 * backoff with jitter after a drop, keep-alive pings to notice half-open connections, and the
 * refused-upgrade HTTP status turned into a readable error. Producers and consumers keep their
 * own state and react to `onOpen` / `onDown`.
 */
import WebSocket from 'ws';
import { Backoff } from './backoff';
import type { ConnectionSettings } from './connection-settings';
import { PulsarClosedError, PulsarConnectError } from './errors';
import { describeUpgradeError } from './ws-frames';

export interface SessionHandlers {
  /** A session is open (the first one or a re-opened one); `generation` counts them from 1. */
  onOpen(generation: number): void;
  onMessage(text: string): void;
  /** The open session `generation` was lost; a reconnect is scheduled unless the session is closed. */
  onDown(error: Error, generation: number): void;
}

/**
 * ws masks every client frame with a random key (RFC 6455 asks for it to protect intermediaries
 * from hostile browser scripts). A server-side client gains nothing from it, and a zero mask lets
 * ws skip the masking pass and the copy it needs.
 */
const zeroMask = (mask: Buffer): void => {
  mask.fill(0);
};

/** TLS verification failures: retrying cannot help, so the first connect fails at once. */
const TLS_TRUST_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export class ReconnectingSession {
  private ws: WebSocket | undefined;
  private generation = 0;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private failStart: ((error: Error) => void) | undefined;
  private readonly backoff: Backoff;

  constructor(
    private readonly url: string,
    /** For log lines, e.g. `producer persistent://public/default/t`. */
    private readonly label: string,
    private readonly settings: ConnectionSettings,
    private readonly handlers: SessionHandlers,
  ) {
    this.backoff = new Backoff(settings.reconnectInitialDelayMs, settings.reconnectMaxDelayMs);
  }

  get isOpen(): boolean {
    return this.ws !== undefined && this.ws.readyState === WebSocket.OPEN;
  }

  /** Generation of the current (or last) open session; 0 before the first open. */
  get currentGeneration(): number {
    return this.generation;
  }

  /**
   * Opens the initial session. Transient failures are retried with backoff for up to
   * `operationTimeoutMs`; a 4xx refusal rejects at once. On rejection the session is closed.
   */
  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + this.settings.operationTimeoutMs;
      this.failStart = (error) => {
        this.failStart = undefined;
        reject(error);
      };
      const attempt = (): void => {
        this.retryTimer = undefined;
        this.connect((error) => {
          if (this.closed) {
            this.failStart?.(new PulsarClosedError(`${this.label}: closed while connecting`));
            return;
          }
          if (!error) {
            this.failStart = undefined;
            resolve();
            return;
          }
          const retryable = !(error instanceof PulsarConnectError) || error.retryable;
          const delay = this.backoff.next();
          if (!retryable || Date.now() + delay > deadline) {
            this.closed = true;
            this.failStart?.(error);
            return;
          }
          this.settings.logger.warn(`${this.label}: connect failed (${error.message}); retrying in ${delay} ms`);
          this.retryTimer = setTimeout(attempt, delay);
        });
      };
      attempt();
    });
  }

  /** Writes a text frame if a session is open; false otherwise (nothing written, `cb` not called). */
  send(data: string, cb?: (error?: Error) => void): boolean {
    const ws = this.ws;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(data, cb);
    return true;
  }

  /** Stops reconnecting and closes the current session with a normal close frame. */
  async close(): Promise<void> {
    if (this.closed && this.ws === undefined) return;
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.failStart?.(new PulsarClosedError(`${this.label}: closed while connecting`));
    this.stopKeepAlive();
    const ws = this.ws;
    this.ws = undefined;
    if (ws === undefined) return;
    if (ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2_000);
      ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'client closed');
      else ws.terminate();
    });
  }

  /** Opens one WebSocket; `done` is called exactly once: with nothing once open, or with the failure. */
  private connect(done: (error?: Error) => void): void {
    let settled = false;
    let refusal: PulsarConnectError | undefined;
    let lastError: Error | undefined;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      done(error);
    };
    const ws = new WebSocket(this.url, {
      headers: this.settings.headers,
      handshakeTimeout: this.settings.connectTimeoutMs,
      perMessageDeflate: false,
      generateMask: zeroMask,
      ca: this.settings.tls.ca,
      rejectUnauthorized: this.settings.tls.rejectUnauthorized,
    });
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        refusal = new PulsarConnectError(
          `${this.label}: upgrade refused with HTTP ${status}: ${describeUpgradeError(body)}`,
          status,
          body.slice(0, 4000),
        );
        ws.terminate();
      });
    });
    ws.on('error', (error) => {
      lastError = error;
    });
    ws.on('open', () => {
      if (this.closed) {
        ws.close(1000, 'client closed');
        finish(new PulsarClosedError(`${this.label}: closed while connecting`));
        return;
      }
      this.ws = ws;
      this.generation++;
      this.backoff.reset();
      this.startKeepAlive(ws);
      finish();
      this.handlers.onOpen(this.generation);
    });
    ws.on('message', (data: Buffer) => {
      if (this.ws === ws) this.handlers.onMessage(data.toString('utf8'));
    });
    ws.on('pong', () => {
      this.awaitingPong = false;
    });
    ws.on('close', (code: number, reason: Buffer) => {
      if (!settled) {
        const message = lastError?.message ?? `closed during handshake (code ${code})`;
        const errorCode = (lastError as NodeJS.ErrnoException | undefined)?.code;
        const permanent = errorCode !== undefined && TLS_TRUST_ERRORS.has(errorCode);
        finish(refusal ?? new PulsarConnectError(`${this.label}: ${message}`, undefined, undefined, permanent));
        return;
      }
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.stopKeepAlive();
      const why = lastError?.message ?? `code ${code}${reason.length ? ` ${reason.toString('utf8')}` : ''}`;
      const error = new PulsarConnectError(`${this.label}: session lost (${why})`);
      this.handlers.onDown(error, this.generation);
      if (!this.closed) {
        this.settings.logger.warn(`${error.message}; reconnecting`);
        this.scheduleReconnect();
      }
    });
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const delay = this.backoff.next();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect((error) => {
        if (this.closed) return;
        if (error) {
          this.settings.logger.warn(
            `${this.label}: reconnect attempt ${this.backoff.attempts} failed (${error.message})`,
          );
          this.scheduleReconnect();
        } else {
          this.settings.logger.log(`${this.label}: reconnected`);
        }
      });
    }, delay);
  }

  private startKeepAlive(ws: WebSocket): void {
    this.stopKeepAlive();
    if (this.settings.keepAliveIntervalMs <= 0) return;
    this.awaitingPong = false;
    this.keepAliveTimer = setInterval(() => {
      if (this.awaitingPong) {
        this.settings.logger.warn(`${this.label}: no pong within ${this.settings.keepAliveIntervalMs} ms; dropping session`);
        ws.terminate();
        return;
      }
      this.awaitingPong = true;
      ws.ping();
    }, this.settings.keepAliveIntervalMs);
    this.keepAliveTimer.unref();
  }

  private stopKeepAlive(): void {
    if (this.keepAliveTimer) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = undefined;
  }
}
