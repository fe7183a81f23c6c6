import { errorFromAnswer, TimerNetworkError } from './errors';
import { parseRetryAfter, RETRY_DEFAULTS, retryDelay, RetryOptions } from './retry';
import { OperationId, ROUTES } from './routes';
import type {
  Accounting,
  AccountingQuery,
  AppSummary,
  AppToken,
  AppView,
  BackfillRequest,
  BackfillResult,
  BatchCreatedTimer,
  Calendar,
  CalendarEdit,
  CreateCalendarRequest,
  CreateMaintenanceRequest,
  CreateTimerOptions,
  CreateTimerRequest,
  CreateTimerResult,
  CreateTimersRequest,
  CreateTimersResult,
  DeadLetter,
  DeadLetterSelection,
  DeadLettersQuery,
  DisableResult,
  EditResult,
  EnableResult,
  FailureWebhook,
  FailureWebhookState,
  HealthReport,
  IssuedToken,
  ListAppsQuery,
  ListTimersQuery,
  ListTokensQuery,
  LoadQuery,
  MaintenanceWindow,
  Overview,
  OverviewQuery,
  Page,
  PatchTimerRequest,
  PauseState,
  PreviewQuery,
  PreviewResult,
  PutCalendarRequest,
  ProjectedLoad,
  PurgeResult,
  QuotaState,
  RecordsQuery,
  ReplayResult,
  RunResult,
  RotateSecretRequest,
  SecretView,
  SetQuotaRequest,
  TaskRecord,
  Timer,
  TimerId,
  TimerRef,
  TimerVersion,
  TimerVersionsQuery,
  UpdateTimerRequest,
} from './types';

export interface TimerClientOptions {
  /** Where the api answers, e.g. `http://127.0.0.1:8092` (a path prefix is kept). */
  baseUrl: string;
  /** The admin token or an app token (`tmr_...`); none when the api runs without authentication. */
  token?: string;
  retry?: RetryOptions;
  /** Per attempt (ms, default 30,000). */
  timeoutMs?: number;
  /** Extra headers on every request (e.g. `X-Request-Id`). */
  headers?: Record<string, string>;
  /** Default: the global `fetch` (Node 20+, browsers). */
  fetch?: typeof fetch;
  /** How to wait between retries (tests). */
  sleep?: (ms: number) => Promise<void>;
}

interface Call {
  /** Values of the path's `{name}` parameters (URL-encoded here). */
  params?: Record<string, string>;
  query?: object;
  body?: unknown;
  headers?: Record<string, string>;
  /** Whether a 429/503 may be sent again (false for a create without an Idempotency-Key). */
  retry?: boolean;
  /** A status answered as a result instead of an error (the readiness probe's 503). */
  accept?: number;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** `?a=1&b=x` from an object, leaving out undefined and null. */
export function queryString(query: object | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

const ref = (r: TimerRef): { id: TimerId; app: string } => ({ id: r.id, app: r.app });

/**
 * A typed client of the timer api, one method per route (named after its operationId, see
 * {@link ROUTES}). Fetch-based, no Node-only imports: it runs in Node 20+ and in a browser bundle.
 * Failures throw {@link TimerApiError} (the api answered 4xx/5xx) or {@link TimerNetworkError}.
 * 429 and 503 are sent again after their `Retry-After` (see {@link RetryOptions}); a create only when
 * it carries an Idempotency-Key.
 */
export class TimerClient {
  private readonly base: string;
  private readonly retry: Required<RetryOptions>;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: TimerClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.retry = { ...RETRY_DEFAULTS, ...options.retry };
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** Creates a timer (disabled: enable it to start firing). */
  async createTimer(req: CreateTimerRequest, opts: CreateTimerOptions = {}): Promise<CreateTimerResult> {
    const key = opts.idempotencyKey;
    const a = await this.send('createTimer', { body: req, headers: key === undefined ? {} : { [IDEMPOTENCY_KEY_HEADER]: key }, retry: key !== undefined });
    const { id, version } = parse<{ id: number; version: number }>(a);
    return { id, version, replayed: a.headers.get('idempotent-replayed') === 'true' };
  }

  /** Creates many timers of one app in one request and transaction (and enables them with `enable`): all or nothing. */
  async createTimers(req: CreateTimersRequest, opts: CreateTimerOptions = {}): Promise<CreateTimersResult> {
    const key = opts.idempotencyKey;
    const a = await this.send('createTimers', { body: req, headers: key === undefined ? {} : { [IDEMPOTENCY_KEY_HEADER]: key }, retry: key !== undefined });
    const { timers } = parse<{ data: { timers: BatchCreatedTimer[] } }>(a).data;
    return { timers, replayed: a.headers.get('idempotent-replayed') === 'true' };
  }

  /** A timer with the preview of its next fire times (`nextFireTimes`). */
  async getTimer(r: TimerRef): Promise<Timer> {
    return parse<{ data: Timer }>(await this.send('getTimer', { query: ref(r) })).data;
  }

  /** A page of an app's live timers, newest first. */
  async listTimers(q: ListTimersQuery): Promise<Page<Timer>> {
    return page(await this.send('listTimers', { query: q }));
  }

  /** Replaces the definition (PUT); a stale `version` throws 409 with `currentVersion`. */
  async updateTimer(req: UpdateTimerRequest): Promise<EditResult> {
    return parse<{ data: EditResult }>(await this.send('updateTimer', { body: req })).data;
  }

  /** Changes the fields given (PATCH); a stale `version` throws 409 with `currentVersion`. */
  async patchTimer(req: PatchTimerRequest): Promise<EditResult> {
    return parse<{ data: EditResult }>(await this.send('patchTimer', { body: req })).data;
  }

  /** Soft delete: the name becomes reusable, pending fires are removed. */
  async deleteTimer(r: TimerRef): Promise<void> {
    await this.send('deleteTimer', { body: ref(r) });
  }

  /** The versions of a timer, newest first. */
  async listTimerVersions(q: TimerVersionsQuery): Promise<Page<TimerVersion>> {
    return page(await this.send('listTimerVersions', { query: q }));
  }

  async enableTimer(r: TimerRef): Promise<EnableResult> {
    return parse<{ data: EnableResult }>(await this.send('enableTimer', { body: ref(r) })).data;
  }

  async disableTimer(r: TimerRef): Promise<DisableResult> {
    return parse<{ data: DisableResult }>(await this.send('disableTimer', { body: ref(r) })).data;
  }

  /** One fire now (an enabled timer only). */
  async runTimer(r: TimerRef): Promise<RunResult> {
    return parse<{ data: RunResult }>(await this.send('runTimer', { body: ref(r) })).data;
  }

  /** The fire times of a schedule (not of a stored timer: give its fields), with DST flags; nothing is created. */
  async previewFireTimes(q: PreviewQuery): Promise<PreviewResult> {
    return parse<{ data: PreviewResult }>(await this.send('previewFireTimes', { query: q })).data;
  }

  /** Creates and delivers the missing fires of a past range [from, to) of a timer's schedule. */
  async backfillTimer(req: BackfillRequest): Promise<BackfillResult> {
    return parse<{ data: BackfillResult }>(await this.send('backfillTimer', { body: req })).data;
  }

  /** Fire records of an app, a timer (`timerID`) or a fire (`fireID`), latest first. */
  async listRecords(q: RecordsQuery): Promise<Page<TaskRecord>> {
    return page(await this.send('listRecords', { query: q }));
  }

  /** Admin. */
  async createApp(req: { app: string }): Promise<AppView> {
    return parse<{ data: AppView }>(await this.send('createApp', { body: req })).data;
  }

  /** Admin: every app, by name. */
  async listApps(q: ListAppsQuery = {}): Promise<Page<AppSummary>> {
    return page(await this.send('listApps', { query: q }));
  }

  /** An app's tokens, newest first (live ones unless `includeRevoked`); never the token itself. */
  async listAppTokens(q: ListTokensQuery): Promise<Page<AppToken>> {
    return page(await this.send('listAppTokens', { query: q }));
  }

  /** Admin; the token is in the answer only. */
  async issueAppToken(req: { app: string; label?: string }): Promise<IssuedToken> {
    return parse<{ data: IssuedToken }>(await this.send('issueAppToken', { body: req })).data;
  }

  async revokeAppToken(req: { app: string; tokenId: TimerId }): Promise<void> {
    await this.send('revokeAppToken', { body: req });
  }

  /** A new callback signing secret, in the answer only. */
  async rotateAppSecret(req: RotateSecretRequest): Promise<SecretView> {
    return parse<{ data: SecretView }>(await this.send('rotateAppSecret', { body: req })).data;
  }

  async pauseApp(req: { app: string }): Promise<PauseState> {
    return parse<{ data: PauseState }>(await this.send('pauseApp', { body: req })).data;
  }

  async resumeApp(req: { app: string }): Promise<PauseState> {
    return parse<{ data: PauseState }>(await this.send('resumeApp', { body: req })).data;
  }

  async getAppAccounting(q: AccountingQuery): Promise<Accounting> {
    return parse<{ data: Accounting }>(await this.send('getAppAccounting', { query: q })).data;
  }

  /** Fires per bucket by outcome, lateness p50/p99 and the backlog over [from, to) (default the last hour in minutes): an app's, or (admin, no app) all apps'. */
  async getOverview(q: OverviewQuery = {}): Promise<Overview> {
    return parse<{ data: Overview }>(await this.send('getOverview', { query: q })).data;
  }

  /** Admin: replaces the app's quotas (null or left out: the default; 0: no limit). */
  async setAppQuota(req: SetQuotaRequest): Promise<QuotaState> {
    return parse<{ data: QuotaState }>(await this.send('setAppQuota', { body: req })).data;
  }

  async getAppQuota(q: { app: string }): Promise<QuotaState> {
    return parse<{ data: QuotaState }>(await this.send('getAppQuota', { query: q })).data;
  }

  /** Pending fires per second of [from, to): an app's, or (admin, no app) all apps'. */
  async getProjectedLoad(q: LoadQuery = {}): Promise<ProjectedLoad> {
    return parse<{ data: ProjectedLoad }>(await this.send('getProjectedLoad', { query: q })).data;
  }

  /** The app's dead letters, latest run time first. */
  async listDeadLetters(q: DeadLettersQuery): Promise<Page<DeadLetter>> {
    return page(await this.send('listDeadLetters', { query: q }));
  }

  /** Delivers the selected dead letters once more (at most 500 a request: see `remaining`). */
  async replayDeadLetters(sel: DeadLetterSelection): Promise<ReplayResult> {
    return parse<{ data: ReplayResult }>(await this.send('replayDeadLetters', { body: sel })).data;
  }

  /** Removes the selected dead letters from the list (their failed records stay). */
  async purgeDeadLetters(sel: DeadLetterSelection): Promise<PurgeResult> {
    return parse<{ data: PurgeResult }>(await this.send('purgeDeadLetters', { body: sel })).data;
  }

  /** Where the app's dead-lettered fires are POSTed; null removes it. */
  async setFailureWebhook(req: { app: string; failureWebhook: FailureWebhook | null }): Promise<FailureWebhookState> {
    return parse<{ data: FailureWebhookState }>(await this.send('setFailureWebhook', { body: req })).data;
  }

  async createMaintenanceWindow(req: CreateMaintenanceRequest): Promise<MaintenanceWindow> {
    return parse<{ data: MaintenanceWindow }>(await this.send('createMaintenanceWindow', { body: req })).data;
  }

  async listMaintenanceWindows(q: { app: string }): Promise<MaintenanceWindow[]> {
    return parse<{ data: MaintenanceWindow[] }>(await this.send('listMaintenanceWindows', { query: q })).data;
  }

  /** The id and app go in the query string. */
  async deleteMaintenanceWindow(q: { app: string; id: TimerId }): Promise<void> {
    await this.send('deleteMaintenanceWindow', { query: q });
  }

  /** A calendar of excluded days that timers of the app may refer to (`calendars`). */
  async createCalendar(req: CreateCalendarRequest): Promise<Calendar> {
    return parse<{ data: Calendar }>(await this.send('createCalendar', { body: req })).data;
  }

  async listCalendars(q: { app: string }): Promise<Calendar[]> {
    return parse<{ data: Calendar[] }>(await this.send('listCalendars', { query: q })).data;
  }

  /** One calendar, with the ids of the live timers that use it. */
  async getCalendar(q: { app: string; name: string }): Promise<Calendar> {
    return parse<{ data: Calendar }>(await this.send('getCalendar', { params: { name: q.name }, query: { app: q.app } })).data;
  }

  /** Replaces the calendar's zone and excluded days; the fires of the timers that use it are regenerated. */
  async putCalendar(q: { app: string; name: string }, req: PutCalendarRequest): Promise<CalendarEdit> {
    return parse<{ data: CalendarEdit }>(await this.send('putCalendar', { params: { name: q.name }, query: { app: q.app }, body: req })).data;
  }

  /** 409 (TimerApiError) while live timers use it. */
  async deleteCalendar(q: { app: string; name: string }): Promise<void> {
    await this.send('deleteCalendar', { params: { name: q.name }, query: { app: q.app } });
  }

  /** Readiness: `ok` false (not an error) when a dependency is down (503). */
  async getReadiness(): Promise<HealthReport> {
    return health(await this.send('getReadiness', { accept: 503, retry: false }));
  }

  async getLiveness(): Promise<HealthReport> {
    return health(await this.send('getLiveness', {}));
  }

  /** The Prometheus text of the api process. */
  async getMetrics(): Promise<string> {
    return (await this.send('getMetrics', {})).text;
  }

  private async send(op: OperationId, call: Call): Promise<Answer> {
    const { method, path: template } = ROUTES[op];
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(call.params?.[name] ?? ''));
    const url = `${this.base}${path}${queryString(call.query)}`;
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers, ...call.headers };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    for (let retry = 1; ; retry++) {
      let answer: Answer;
      try {
        const res = await this.fetchImpl(url, { method, headers, body, signal: AbortSignal.timeout(timeoutMs) });
        answer = { status: res.status, headers: res.headers, text: await res.text() };
      } catch (e) {
        const why = (e as { name?: unknown } | null)?.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : describe(e);
        throw new TimerNetworkError(`${method} ${url}: ${why}`, { cause: e });
      }
      if (answer.status < 400 || answer.status === call.accept) return answer;
      const retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'));
      const delay = call.retry === false ? undefined : retryDelay(answer.status, retryAfterMs, retry, this.retry);
      if (delay === undefined) throw errorFromAnswer(answer.status, '', answer.text, retryAfterMs);
      await this.sleep(delay);
    }
  }
}

/** An error's message, with its cause's: Node's fetch says "fetch failed" and puts the reason (ECONNREFUSED ...) in `cause`. */
function describe(e: unknown): string {
  // Duck-typed: fetch's errors may come from another realm (a test VM, a frame), where instanceof fails.
  const message = (x: unknown) => (typeof x === 'object' && x !== null && typeof (x as Error).message === 'string' ? (x as Error).message : undefined);
  const cause = message((e as { cause?: unknown } | null)?.cause);
  return `${message(e) ?? String(e)}${cause ? ` (${cause})` : ''}`;
}

function parse<T>(a: Answer): T {
  try {
    return JSON.parse(a.text) as T;
  } catch (e) {
    throw new TimerNetworkError(`answer ${a.status} is not JSON: ${a.text.slice(0, 200)}`, { cause: e });
  }
}

function page<T>(a: Answer): Page<T> {
  const { data, total } = parse<Page<T>>(a);
  return { data, total };
}

function health(a: Answer): HealthReport {
  return { ...parse<Omit<HealthReport, 'ok'>>(a), ok: a.status === 200 };
}
