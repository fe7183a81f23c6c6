/** Base class of every error this library raises, so callers can tell Pulsar failures apart. */
export class PulsarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Opening a WebSocket session failed: network error, timeout, or an HTTP status on the upgrade. */
export class PulsarConnectError extends PulsarError {
  constructor(
    message: string,
    /** HTTP status of a refused upgrade; undefined for network errors and timeouts. */
    readonly status?: number,
    /** Response body of a refused upgrade (truncated). */
    readonly body?: string,
    /** Known not to heal by retrying (e.g. the broker's TLS certificate is not trusted). */
    readonly permanent = false,
  ) {
    super(message);
  }

  /** Worth trying again: no HTTP answer, or 5xx / 408 / 429. 4xx means the request itself is wrong. */
  get retryable(): boolean {
    if (this.permanent) return false;
    return this.status === undefined || this.status >= 500 || this.status === 408 || this.status === 429;
  }
}

/** The broker answered a send with an error (`result` other than `ok`). */
export class PulsarSendError extends PulsarError {
  constructor(
    readonly result: string,
    readonly errorMsg: string | undefined,
  ) {
    super(`send failed: ${result}${errorMsg ? ` (${errorMsg})` : ''}`);
  }
}

/** A send was not acknowledged within the send timeout. It may still have been persisted. */
export class PulsarTimeoutError extends PulsarError {}

/** The producer or consumer was closed before the operation could complete. */
export class PulsarClosedError extends PulsarError {}

/** An admin REST call answered with an unexpected status. */
export class PulsarAdminError extends PulsarError {
  constructor(
    readonly method: string,
    readonly path: string,
    /** HTTP status; 0 when no response arrived (network error, timeout). */
    readonly status: number,
    readonly body: string,
  ) {
    super(`Pulsar admin ${method} ${path} failed: ${status === 0 ? body : `HTTP ${status} ${body}`}`.trim());
  }
}
