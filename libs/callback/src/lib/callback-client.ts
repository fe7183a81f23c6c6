import { isIP } from 'net';
import { FireRef, fireId } from '@timer/contracts';
import { Agent, errors } from 'undici';
import { guardedLookup, isPrivateAddress, PrivateAddressError } from './address-policy';
import { parseRetryAfter } from './retry-after';
import { signatureHeader, standardWebhookHeaders } from './signature';

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
  /** The W3C trace context of the call (tracing on): sent as `traceparent`, replacing any of the timer's headers of that name. */
  traceparent?: string;
  /** The Standard Webhooks `webhook-id` of a message that is not the callback itself (a result webhook's); default the fire id. */
  messageId?: string;
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
  /** What the receiver answered, as the client's `recordHeaders` and `recordBodyBytes` keep it; absent when both are off or no answer came. */
  response?: CallbackResponse;
}

/** The part of an answer a fire's record keeps (docs/callback-answers.md). */
export interface CallbackResponse {
  status: number;
  /** The configured subset, lower-case names; several values of one name joined with `, `. */
  headers: Record<string, string>;
  /** The first `recordBodyBytes` bytes as UTF-8, invalid sequences replaced by U+FFFD. */
  body: string;
  /** The body was longer than what `body` keeps. */
  truncated: boolean;
}

export interface CallbackClientOptions {
  timeoutMs?: number;
  allowPrivate?: boolean;
  maxOutputBytes?: number;
  /** Keep-alive connections per origin. */
  connectionsPerOrigin?: number;
  userAgent?: string;
  /** Response header names kept in `CallbackResult.response` (any case). */
  recordHeaders?: readonly string[];
  /** Bytes of the response body kept in `CallbackResult.response` (0: none). */
  recordBodyBytes?: number;
}

/** What {@link CallHandler} keeps of an answer for `CallbackResult.response`; null when nothing is kept. */
interface Capture {
  headers: ReadonlySet<string>;
  bodyBytes: number;
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
  private readonly capture: Capture | null;
  private readonly targets = new Map<string, Target>();
  /** What a timer's header object names that the client replaces, by the (cached) object. */
  private readonly names = new WeakMap<object, GivenNames>();

  constructor(options: CallbackClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.allowPrivate = options.allowPrivate ?? false;
    this.maxOutputBytes = options.maxOutputBytes ?? 4_096;
    this.userAgent = options.userAgent ?? 'timer-service/0.1';
    const headers = new Set((options.recordHeaders ?? []).map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0));
    const bodyBytes = Math.max(0, options.recordBodyBytes ?? 0);
    this.capture = headers.size > 0 || bodyBytes > 0 ? { headers, bodyBytes } : null;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin ?? 64,
      keepAliveTimeout: 30_000,
      connect: this.allowPrivate ? { timeout: this.timeoutMs } : { timeout: this.timeoutMs, lookup: guardedLookup },
    });
  }

  /**
   * Calls the callback. `signing` is the app's signing secret, or its secrets with the current one
   * first (a rotation's overlap): the Standard Webhooks headers carry a signature per secret, the
   * deprecated X-Timer-Signature the current secret's.
   */
  async deliver(req: CallbackRequest, fire: FireIdentity, signing?: string | readonly string[]): Promise<CallbackResult> {
    const started = Date.now();
    const body = req.body ?? '';
    const headers = this.headersOf(req.header);
    const id = fireId(fire.timerId, fire.runAt);
    headers['x-timer-id'] = fire.timerId;
    headers['x-timer-fire-id'] = id;
    headers['x-timer-scheduled-at'] = String(fire.runAt);
    headers['x-timer-jittered-at'] = String(fire.jitteredAt ?? fire.runAt);
    headers['x-timer-attempt'] = String(fire.attempt);
    if (fire.redelivery) headers['x-timer-redelivery'] = '1';
    if (fire.backfill) headers['x-timer-backfill'] = '1';
    if (fire.traceparent !== undefined) traceparentOf(headers, fire.traceparent);
    const secrets = typeof signing === 'string' ? [signing] : signing;
    if (secrets && secrets.length > 0) {
      const now = Date.now();
      headers['x-timer-signature'] = signatureHeader(secrets[0], now, body);
      Object.assign(headers, standardWebhookHeaders(fire.messageId ?? id, secrets, now, body));
    }
    const timeoutMs = req.timeoutMs !== undefined && req.timeoutMs > 0 ? req.timeoutMs : this.timeoutMs;
    try {
      const target = this.targetOf(req.url);
      const res = await new Promise<Answer>((resolve, reject) => {
        this.agent.dispatch(
          { origin: target.origin, path: target.path, method: req.method, headers, body: body.length > 0 ? body : undefined, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
          new CallHandler(timeoutMs, this.maxOutputBytes, this.capture, resolve, reject),
        );
      });
      const ok = res.status >= 200 && res.status < 300;
      const result: CallbackResult = {
        ok,
        status: res.status,
        costMs: Date.now() - started,
        output: res.output,
        error: ok ? undefined : `HTTP ${res.status}`,
        retryable: !ok && (res.status >= 500 || res.status === 408 || res.status === 429),
      };
      if (res.status === 429 || res.status === 503) {
        const retryAfterMs = parseRetryAfter(res.retryAfter, Date.now());
        if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
      }
      if (res.response) result.response = res.response;
      return result;
    } catch (e) {
      return { ok: false, costMs: Date.now() - started, ...describeFailure(e, timeoutMs) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /**
   * The timer's headers; a `User-Agent` among them (any case) replaces ours rather than joining it.
   * `webhook-*` names (any case) are dropped: the signature headers are the service's alone, and a
   * second `Webhook-Signature` beside ours would reach the receiver as well.
   */
  private headersOf(given: Record<string, string[]> | undefined): Record<string, string | string[]> {
    // No headers of its own (the common timer): no fresh `{}` remembered in the WeakMap per call, whose
    // entries (one per fire) were this function's main cost.
    if (given === undefined) return { 'user-agent': this.userAgent };
    const headers: Record<string, string | string[]> = { ...given };
    let named = this.names.get(given);
    if (named === undefined) {
      const lower = Object.keys(given).map((name) => [name, name.toLowerCase()] as const);
      named = { userAgent: lower.some(([, l]) => l === 'user-agent'), reserved: lower.filter(([, l]) => l.startsWith('webhook-')).map(([n]) => n) };
      this.names.set(given, named);
    }
    if (!named.userAgent) headers['user-agent'] = this.userAgent;
    for (const name of named.reserved) delete headers[name];
    return headers;
  }

  /**
   * Where a URL is sent (as undici's `request` splits it: the fragment dropped), checked as `request`
   * checks it; remembered per URL, since a timer calls the same one every fire. Node connects to an
   * IP literal without a lookup, so the private-address guard checks it here.
   */
  private targetOf(url: string): Target {
    let t = this.targets.get(url);
    if (!t) {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new errors.InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
      const host = u.hostname.replace(/^\[|\]$/g, '');
      t = { origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname, privateHost: isIP(host) && isPrivateAddress(host) ? host : null };
      if (this.targets.size >= TARGETS_KEPT) this.targets.clear();
      this.targets.set(url, t);
    }
    if (t.privateHost !== null && !this.allowPrivate) throw new PrivateAddressError(t.privateHost, t.privateHost);
    return t;
  }
}

/** Names in a timer's own headers that the client replaces or drops. */
interface GivenNames {
  userAgent: boolean;
  reserved: string[];
}

/** A parsed callback URL. */
interface Target {
  origin: string;
  path: string;
  /** The host when it is a private IP literal. */
  privateHost: string | null;
}

/** Parsed URLs remembered (templated URLs differ per fire: the map is emptied when full). */
const TARGETS_KEPT = 10_000;
/** A response body is read up to this size; a larger one is cut and its connection dropped rather than drained. */
const MAX_READ_BYTES = 1_048_576;

/** A response as the call reads it. */
interface Answer {
  status: number;
  retryAfter: string | undefined;
  output: string;
  response?: CallbackResponse;
}

/**
 * One call on undici's dispatcher API: no response stream, no AbortSignal and no async iterator per
 * call (undici's `request` builds all three, a large share of the executor's CPU per fire:
 * docs/benchmarks.md, "Measurements behind the code").
 * One deadline for the whole call (connect, headers, body): a request still queued for a connection
 * when it passes is aborted as it gets one, as an aborted signal does.
 */
class CallHandler {
  private abortCall: ((reason: Error) => void) | null = null;
  private reason: Error | null = null;
  private status = 0;
  private retryAfter: string | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private kept: Record<string, string> | null = null;
  private settled = false;
  private readonly deadline: NodeJS.Timeout;

  constructor(
    private readonly timeoutMs: number,
    private readonly maxOutputBytes: number,
    private readonly capture: Capture | null,
    private readonly resolve: (a: Answer) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    this.deadline = setTimeout(() => this.abort(new errors.RequestAbortedError(`no answer within ${this.timeoutMs} ms`)), timeoutMs);
  }

  onConnect(abort: (reason: Error) => void): void {
    if (this.reason) abort(this.reason);
    else this.abortCall = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true; // 1xx: the answer is still to come
    this.status = statusCode;
    if (statusCode === 429 || statusCode === 503) this.retryAfter = headerOf(rawHeaders, 'retry-after');
    if (this.capture) this.kept = keptHeaders(rawHeaders, this.capture.headers);
    return true;
  }

  onData(chunk: Buffer): boolean {
    // Only what the output and the record keep is held; the rest is counted and dropped.
    if (this.size < this.maxOutputBytes || (this.capture !== null && this.size < this.capture.bodyBytes)) this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > MAX_READ_BYTES) {
      // Stop reading a huge response: the answer is what came so far; the connection is discarded.
      this.finish();
      this.abort(new errors.RequestAbortedError('response body too large'));
    }
    return true;
  }

  onComplete(): void {
    this.finish();
  }

  onError(err: Error): void {
    clearTimeout(this.deadline);
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }

  private finish(): void {
    clearTimeout(this.deadline);
    if (this.settled) return;
    this.settled = true;
    // Most answers are one chunk (or none): read as they are, without Buffer.concat's copy.
    const n = this.chunks.length;
    const body = n === 0 ? EMPTY : n === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const output = n === 0 ? '' : truncateUtf8(body, this.maxOutputBytes);
    const answer: Answer = { status: this.status, retryAfter: this.retryAfter, output };
    if (this.capture) answer.response = responseOf(this.status, this.kept ?? {}, body, this.size, this.capture.bodyBytes);
    this.resolve(answer);
  }

  private abort(reason: Error): void {
    if (this.abortCall) this.abortCall(reason);
    else this.reason ??= reason;
  }
}

/** The first value of a response header, from undici's raw [name, value, ...] list. */
function headerOf(raw: Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].length === name.length && raw[i].toString('latin1').toLowerCase() === name) return raw[i + 1].toString('latin1');
  }
  return undefined;
}

const EMPTY = Buffer.alloc(0);
/** Characters of one kept response header value. */
const RECORD_HEADER_VALUE_MAX = 1_024;

/** The named headers of undici's raw [name, value, ...] list: lower-case names, repeated ones joined with `, `. */
function keptHeaders(raw: Buffer[], names: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  if (names.size === 0) return out;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    if (!names.has(name)) continue;
    const value = raw[i + 1].toString('utf8');
    const joined = out[name] === undefined ? value : `${out[name]}, ${value}`;
    out[name] = joined.length > RECORD_HEADER_VALUE_MAX ? joined.slice(0, RECORD_HEADER_VALUE_MAX) : joined;
  }
  return out;
}

/**
 * The kept answer: the body's first `maxBytes` bytes (cut on a character boundary), decoded as UTF-8 with
 * invalid sequences as U+FFFD, so any body, binary included, stores as JSON text. `size` is every byte read.
 */
function responseOf(status: number, headers: Record<string, string>, body: Buffer, size: number, maxBytes: number): CallbackResponse {
  const kept = maxBytes <= 0 ? '' : truncateUtf8(body, maxBytes);
  return { status, headers, body: kept, truncated: size > Math.max(0, maxBytes) };
}

function truncateUtf8(buf: Buffer, maxBytes: number): string {
  if (buf.length <= maxBytes) return buf.toString('utf8');
  // Cut on a character boundary: drop continuation bytes (10xxxxxx) at the cut, at most a character's
  // three; more of them are not UTF-8 (a binary body), cut where asked rather than emptied.
  let end = maxBytes;
  while (end > maxBytes - 3 && end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  if ((buf[end] & 0xc0) === 0x80) end = maxBytes;
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

/** Sets `traceparent`, dropping a timer's header of that name in another case (the receiver would see two). */
function traceparentOf(headers: Record<string, string | string[]>, traceparent: string): void {
  for (const name of Object.keys(headers)) if (name !== 'traceparent' && name.toLowerCase() === 'traceparent') delete headers[name];
  headers.traceparent = traceparent;
}
