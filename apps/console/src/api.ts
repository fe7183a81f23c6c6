import { fieldErrors } from './field-errors';

/** What the console reads from the API (the fields of TimerView, TaskView in apps/api). */
export interface NotifyHttpParam {
  url: string;
  method: string;
  header?: Record<string, string[]>;
  body?: string;
  timeoutMs?: number;
}

export interface Timer {
  id: number;
  app: string;
  name: string;
  cron: string | null;
  runAt: number | null;
  every: string | null;
  timeZone: string;
  startAt: number | null;
  endAt: number | null;
  maxFires: number | null;
  notifyHTTPParam: NotifyHttpParam;
  status: number;
  retryPolicy: { maxAttempts: number; backoffMs: number };
  misfirePolicy: string;
  version: number;
  createdAt: number;
  nextFireTimes?: number[];
}

export interface TaskRecord {
  fireId: string;
  timerID: number;
  runAt: number;
  status: number;
  attempt: number;
  httpStatus: number | null;
  costMs: number | null;
  latenessMs: number | null;
  error: string | null;
}

/** The fields a create or an edit sends (the API validates them; the console only shapes them). */
export interface TimerInput {
  name?: string;
  cron?: string;
  every?: string;
  runAt?: string;
  timeZone?: string;
  /** `body: null` in a PATCH removes the body. */
  notifyHTTPParam?: { url?: string; method?: string; body?: string | null };
}

export const TIMER_STATUS: Readonly<Record<number, string>> = { 1: 'disabled', 2: 'enabled', 3: 'completed' };
export const TASK_STATUS: Readonly<Record<number, string>> = { 0: 'pending', 1: 'running', 2: 'succeeded', 3: 'failed', 4: 'missed' };

/** An answer with a non-zero `code`: its HTTP status, message, and the message of each field it names. */
export class ApiError extends Error {
  readonly fields: Record<string, string>;

  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.fields = status === 400 ? fieldErrors(message) : {};
  }
}

export interface Session {
  token: string;
  app: string;
}

type Query = Record<string, string | number | boolean | undefined>;

/** The API of the service, same origin, with the session's bearer token. */
export class Api {
  constructor(private readonly session: Session) {}

  get app(): string {
    return this.session.app;
  }

  private async call<T>(method: string, path: string, options: { query?: Query; body?: object } = {}): Promise<T> {
    const url = new URL(path, window.location.origin);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const res = await fetch(url, {
      method,
      headers: {
        Authorization: `Bearer ${this.session.token}`,
        Accept: 'application/json',
        ...(options.body ? { 'Content-Type': 'application/json' } : {}),
      },
      body: options.body ? JSON.stringify(options.body) : undefined,
    });
    let answer: { code?: number; msg?: string; data?: unknown } = {};
    try {
      answer = (await res.json()) as typeof answer;
    } catch {
      // A proxy's HTML error page: the status says enough.
    }
    if (!res.ok || answer.code !== 0) {
      throw new ApiError(res.status, answer.code ?? res.status * 100, answer.msg ?? `HTTP ${res.status}`, answer.data);
    }
    return answer as T;
  }

  listTimers(q: { name?: string; status?: number; pageIndex: number; pageSize: number }): Promise<{ data: Timer[]; total: number }> {
    return this.call('GET', '/api/timer/v1/defs', { query: { app: this.app, ...q } });
  }

  async getTimer(id: number | string): Promise<Timer> {
    return (await this.call<{ data: Timer }>('GET', '/api/timer/v1/def', { query: { app: this.app, id } })).data;
  }

  async createTimer(input: TimerInput): Promise<{ id: number; version: number }> {
    return this.call('POST', '/api/timer/v1/def', { body: { app: this.app, ...input } });
  }

  async patchTimer(id: number, version: number, change: TimerInput): Promise<{ version: number; changed: boolean }> {
    return (await this.call<{ data: { version: number; changed: boolean } }>('PATCH', '/api/timer/v1/def', { body: { app: this.app, id, version, ...change } })).data;
  }

  async enable(id: number): Promise<void> {
    await this.call('POST', '/api/timer/v1/enable', { body: { app: this.app, id } });
  }

  async disable(id: number): Promise<void> {
    await this.call('POST', '/api/timer/v1/unable', { body: { app: this.app, id } });
  }

  async runNow(id: number): Promise<{ fireId: string; runAt: number }> {
    return (await this.call<{ data: { fireId: string; runAt: number } }>('POST', '/api/timer/v1/run', { body: { app: this.app, id } })).data;
  }

  async deleteTimer(id: number): Promise<void> {
    await this.call('DELETE', '/api/timer/v1/def', { body: { app: this.app, id } });
  }

  records(q: { timerID?: number; status?: number; from?: number; to?: number; pageIndex: number; pageSize: number }): Promise<{ data: TaskRecord[]; total: number }> {
    return this.call('GET', '/api/task/v1/records', { query: { app: this.app, ...q } });
  }
}
