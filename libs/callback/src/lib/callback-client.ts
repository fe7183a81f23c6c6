import { isIP } from 'net';
import { FireRef, fireId } from '@timer/contracts';
import { Agent, errors, request } from 'undici';
import { guardedLookup, isPrivateAddress, PrivateAddressError } from './address-policy';
import { parseRetryAfter } from './retry-after';
import { signatureHeader } from './signature';

export type CallbackMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a timer's `notifyHTTPParam` says to call. */
export interface CallbackRequest {
  url: string;
  method: CallbackMethod;
  /** `map[string][]string`, as the seed's API carries it. */
  header?: Record<string, string[]>;
  /** Sent verbatim (never re-encoded). */
  body?: string;
  /** This call's deadline (connect, headers, body) in ms; the client's `timeoutMs` when absent. */
  timeoutMs?: number;
}

/** The fire a delivery belongs to; becomes the `X-Timer-*` headers. */
export interface FireIdentity extends FireRef {
  /** 1-based. */
  attempt: number;
  /** An earlier delivery of this attempt may have reached the receiver: sent as `X-Timer-Redelivery: 1`. */
  redelivery?: boolean;
  /** A fire of a backfill (a past instant delivered on request): sent as `X-Timer-Backfill: 1`. */
  backfill?: boolean;
  /** The time the fire was due after its jitter (`jitterMs`), epoch ms: `X-Timer-Jittered-At`; default `runAt`. */
  jitteredAt?: number;
}

export interface CallbackResult {
  /** 2xx. */
  ok: boolean;
  status?: number;
  costMs: number;
  /** Start of the response body, cut at `maxOutputBytes`. */
  output?: string;
  /** Why it failed, when it did. */
  error?: string;
  /** Worth another attempt: network errors, timeouts, 408, 429 and 5xx. A refused address is not. */
  retryable: boolean;
  /** A 429 or 503 with a readable `Retry-After`: how long the receiver asked us to wait, in ms (uncapped). */
  retryAfterMs?: number;
}

export interface CallbackClientOptions {
  timeoutMs?: number;
  allowPrivate?: boolean;
  maxOutputBytes?: number;
  /** Keep-alive connections per origin. */
  connectionsPerOrigin?: number;
  userAgent?: string;
}

/**
 * Calls timer callbacks over a keep-alive connection pool (undici). 2xx is success, anything else
 * a failure; the response body is always consumed or destroyed so connections are never leaked.
 */
export class CallbackClient {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly allowPrivate: boolean;
  private readonly maxOutputBytes: number;
  private readonly userAgent: string;

  constructor(options: CallbackClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.allowPrivate = options.allowPrivate ?? false;
    this.maxOutputBytes = options.maxOutputBytes ?? 4_096;
    this.userAgent = options.userAgent ?? 'timer-service/0.1';
    this.agent = new Agent({
      connections: options.connectionsPerOrigin ?? 64,
      keepAliveTimeout: 30_000,
      connect: this.allowPrivate ? { timeout: this.timeoutMs } : { timeout: this.timeoutMs, lookup: guardedLookup },
    });
  }

  async deliver(req: CallbackRequest, fire: FireIdentity, signingSecret?: string): Promise<CallbackResult> {
    const started = Date.now();
    const body = req.body ?? '';
    const headers = this.headersOf(req.header);
    headers['x-timer-id'] = fire.timerId;
    headers['x-timer-fire-id'] = fireId(fire.timerId, fire.runAt);
    headers['x-timer-scheduled-at'] = String(fire.runAt);
    headers['x-timer-jittered-at'] = String(fire.jitteredAt ?? fire.runAt);
    headers['x-timer-attempt'] = String(fire.attempt);
    if (fire.redelivery) headers['x-timer-redelivery'] = '1';
    if (fire.backfill) headers['x-timer-backfill'] = '1';
    if (signingSecret) headers['x-timer-signature'] = signatureHeader(signingSecret, Date.now(), body);
    // One deadline for the whole call. Not AbortSignal.timeout: its timer cannot be cancelled, so
    // every call would still fire it (and build a DOMException) seconds after it finished.
    const timeoutMs = req.timeoutMs !== undefined && req.timeoutMs > 0 ? req.timeoutMs : this.timeoutMs;
    const abort = new AbortController();
    const deadline = setTimeout(() => abort.abort(), timeoutMs);
    try {
      this.refuseLiteralPrivate(req.url);
      const res = await request(req.url, {
        method: req.method,
        headers,
        body: body.length > 0 ? body : undefined,
        dispatcher: this.agent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: abort.signal,
      });
      const output = await this.readOutput(res.body);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      const retryAfterMs = res.statusCode === 429 || res.statusCode === 503 ? parseRetryAfter(res.headers['retry-after'], Date.now()) : undefined;
      return {
        ok,
        status: res.statusCode,
        costMs: Date.now() - started,
        output,
        error: ok ? undefined : `HTTP ${res.statusCode}`,
        retryable: !ok && (res.statusCode >= 500 || res.statusCode === 408 || res.statusCode === 429),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      };
    } catch (e) {
      return { ok: false, costMs: Date.now() - started, ...describeFailure(e, timeoutMs) };
    } finally {
      clearTimeout(deadline);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** The timer's headers; a `User-Agent` among them (any case) replaces ours rather than joining it. */
  private headersOf(given: Record<string, string[]> = {}): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = { ...given };
    if (!Object.keys(given).some((name) => name.toLowerCase() === 'user-agent')) headers['user-agent'] = this.userAgent;
    return headers;
  }

  /** Node connects to an IP literal without a lookup, so the guard checks it here. */
  private refuseLiteralPrivate(url: string): void {
    if (this.allowPrivate) return;
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && isPrivateAddress(host)) throw new PrivateAddressError(host, host);
  }

  private async readOutput(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      if (size < this.maxOutputBytes) chunks.push(chunk);
      size += chunk.length;
      if (size > 1_048_576) {
        // Stop reading a huge response; the connection is discarded rather than drained.
        body.destroy();
        break;
      }
    }
    return truncateUtf8(Buffer.concat(chunks), this.maxOutputBytes);
  }
}

function truncateUtf8(buf: Buffer, maxBytes: number): string {
  if (buf.length <= maxBytes) return buf.toString('utf8');
  // Cut on a character boundary: drop continuation bytes (10xxxxxx) at the cut.
  let end = maxBytes;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

function describeFailure(e: unknown, timeoutMs: number): { error: string; retryable: boolean } {
  const cause = (e as { cause?: unknown }).cause;
  if (e instanceof PrivateAddressError || cause instanceof PrivateAddressError) {
    return { error: (e instanceof PrivateAddressError ? e : (cause as PrivateAddressError)).message, retryable: false };
  }
  if (
    e instanceof errors.HeadersTimeoutError ||
    e instanceof errors.BodyTimeoutError ||
    e instanceof errors.ConnectTimeoutError ||
    (e as Error).name === 'TimeoutError' ||
    (e as Error).name === 'AbortError'
  ) {
    return { error: `no answer within ${timeoutMs} ms`, retryable: true };
  }
  if (e instanceof TypeError && /Invalid URL/i.test(e.message)) return { error: `invalid URL: ${e.message}`, retryable: false };
  const code = (e as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code;
  return { error: `${code ? `${code}: ` : ''}${(e as Error).message}`, retryable: true };
}
