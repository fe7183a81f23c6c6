/** Request bodies of the public API (seed 4.6 plus the extensions the API role adds). */
export interface NotifyHttpParam {
  url: string;
  method: string;
  header?: Record<string, string[]>;
  body?: string;
  /** This timer's callback timeout (ms); absent: the executor's TIMER_CALLBACK_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Fill `{{placeholder}}`s in url, header values and body per fire. */
  template?: boolean;
}

export interface NewTimer {
  app: string;
  name: string;
  cron?: string;
  /** One-shot instant, epoch ms. */
  runAt?: number;
  /** Interval such as "90s" or "1h30m". */
  every?: string;
  timeZone?: string;
  /** Bounds (cron and every timers): epoch ms or ISO 8601 with an offset; inclusive. */
  startAt?: number | string;
  endAt?: number | string;
  maxFires?: number;
  notifyHTTPParam: NotifyHttpParam;
  retryPolicy?: { maxAttempts?: number; backoffMs?: number };
  misfirePolicy?: 'fire_late' | 'skip';
  overlapPolicy?: 'allow' | 'skip' | 'buffer_one';
  catchupPolicy?: 'all' | 'latest' | 'none';
  catchupWindowMs?: number;
  jitterMs?: number;
  /** Over the capacity, admission may move the fires within jitterMs instead of refusing (needs jitterMs > 0). */
  autoSpread?: boolean;
  /** The timer's own failure webhook (else the app's). */
  failureWebhook?: { url: string; headers?: Record<string, string | string[]> };
  /** Calendars of the app whose excluded days the timer avoids, and what a fire on one does. */
  calendars?: string[];
  onExcluded?: 'skip' | 'nextBusinessDay' | 'previousBusinessDay';
  /** Where each final answer of the callback is POSTed. */
  resultWebhook?: { url: string; headers?: Record<string, string | string[]> };
}

/** The answer of PUT and PATCH /api/timer/v1/def. */
export interface EditResult {
  id: number;
  version: number;
  changed: boolean;
  superseded: number;
  fires: number;
}

export interface TimerVersion {
  version: number;
  change: string;
  changedAt: number;
  name: string;
  cron: string | null;
  runAt: number | null;
  timeZone: string;
  notifyHTTPParam: NotifyHttpParam;
  status: number;
}

export interface TaskRecord {
  fireId: string;
  timerID: number;
  app: string;
  runAt: number;
  /** 0 pending, 1 running, 2 succeeded, 3 failed, 4 missed. */
  status: number;
  attempt: number;
  httpStatus: number | null;
  costMs: number | null;
  latenessMs: number | null;
  error: string | null;
  output: string | null;
  /** Every attempt made, oldest first. */
  attempts: {
    attempt: number;
    startedAt: number;
    httpStatus: number | null;
    costMs: number | null;
    error: string | null;
    /** What the receiver answered, as the executor keeps it. */
    response: { status: number; headers: Record<string, string>; body: string; truncated: boolean } | null;
  }[];
}

export class ApiCallError extends Error {
  constructor(
    readonly route: string,
    readonly httpStatus: number,
    readonly body: unknown,
  ) {
    super(`${route}: HTTP ${httpStatus} ${JSON.stringify(body)}`);
  }
}

/** How a call ended: its HTTP status and body when the API refused it, else 200 with no body. */
export async function answerOf(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  try {
    await call;
  } catch (e) {
    if (e instanceof ApiCallError) return { status: e.httpStatus, body: e.body };
    throw e;
  }
  return { status: 200, body: undefined };
}

/** A small client of the timer REST API (`code` 0 is success; anything else throws ApiCallError). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  async createTimer(t: NewTimer, opts: { idempotencyKey?: string } = {}): Promise<string> {
    const headers: Record<string, string> = opts.idempotencyKey === undefined ? {} : { 'idempotency-key': opts.idempotencyKey };
    const res = await this.call<{ id: number | string }>('POST', '/api/timer/v1/def', t, headers);
    return String(res.id);
  }

  /** PUT: replaces the definition of timer `id` at `version`. */
  async updateTimer(id: string, version: number, t: NewTimer): Promise<EditResult> {
    return (await this.call<{ data: EditResult }>('PUT', '/api/timer/v1/def', { ...t, id, version })).data;
  }

  /** PATCH: changes the fields given of timer `id` at `version`. */
  async patchTimer(app: string, id: string, version: number, fields: Partial<Omit<NewTimer, 'app' | 'notifyHTTPParam'>> & { notifyHTTPParam?: Partial<NotifyHttpParam> }): Promise<EditResult> {
    return (await this.call<{ data: EditResult }>('PATCH', '/api/timer/v1/def', { ...fields, app, id, version })).data;
  }

  /** The versions of a timer, newest first. */
  async versions(app: string, id: string): Promise<{ data: TimerVersion[]; total: number }> {
    return this.call<{ data: TimerVersion[]; total: number }>('GET', `/api/timer/v1/def/versions?${new URLSearchParams({ id, app })}`);
  }

  async enable(app: string, id: string): Promise<{ changed: boolean; fires: number; until: number }> {
    return (await this.call<{ data: { changed: boolean; fires: number; until: number } }>('POST', '/api/timer/v1/enable', { id, app })).data;
  }

  async unable(app: string, id: string): Promise<void> {
    await this.call('POST', '/api/timer/v1/unable', { id, app });
  }

  async deleteTimer(app: string, id: string): Promise<void> {
    await this.call('DELETE', '/api/timer/v1/def', { id, app });
  }

  async getTimer(app: string, id: string): Promise<Record<string, unknown>> {
    return (await this.call<{ data: Record<string, unknown> }>('GET', `/api/timer/v1/def?${new URLSearchParams({ id, app })}`)).data;
  }

  /** One page of a timer's fire records, latest run time first. */
  async records(app: string, timerId: string, opts: { status?: number; pageIndex?: number; pageSize?: number } = {}): Promise<{ data: TaskRecord[]; total: number }> {
    const q = new URLSearchParams({ app, timerID: timerId, pageIndex: String(opts.pageIndex ?? 1), pageSize: String(opts.pageSize ?? 100) });
    if (opts.status !== undefined) q.set('status', String(opts.status));
    return this.call<{ data: TaskRecord[]; total: number }>('GET', `/api/task/v1/records?${q}`);
  }

  /** Creates and enables a timer; returns its id. */
  async createEnabled(t: NewTimer): Promise<string> {
    const id = await this.createTimer(t);
    await this.enable(t.app, id);
    return id;
  }

  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
    const headers: Record<string, string> = { ...extraHeaders };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    const code = (parsed as { code?: unknown } | null)?.code;
    if (!res.ok || code !== 0) throw new ApiCallError(`${method} ${path.split('?')[0]}`, res.status, parsed);
    return parsed as T;
  }
}
