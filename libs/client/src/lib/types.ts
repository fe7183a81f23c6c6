// Request and answer shapes of the api, written by hand after its DTOs (apps/api/src/*/dto): the
// client must not pull the server's decorators and validators into a browser bundle. Fields the api
// added as extensions are optional in requests.

export type CallbackMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type MisfirePolicy = 'fire_late' | 'skip';
export type OverlapPolicy = 'allow' | 'skip' | 'buffer_one';
export type CatchupPolicy = 'all' | 'latest' | 'none';
/** A fixed-hour cron's wall times in a DST gap: at the gap's end, or not at all. */
export type DstGap = 'shift' | 'skip';
/** A fixed-hour cron's wall times in a DST overlap: the first occurrence, or both. */
export type DstOverlap = 'first' | 'both';
/** An instant: epoch milliseconds, or ISO 8601 with `Z` or an offset. Answers always carry epoch ms. */
export type Instant = number | string;
/** Timer ids are JSON numbers in answers; requests take a number or a digit string. */
export type TimerId = number | string;

/** `status` of a timer. */
export const TimerStatus = { Disabled: 1, Enabled: 2, Completed: 3 } as const;
export type TimerStatus = (typeof TimerStatus)[keyof typeof TimerStatus];

/** `status` of a fire record. */
export const RecordStatus = { Pending: 0, Running: 1, Succeeded: 2, Failed: 3, Missed: 4 } as const;
export type RecordStatus = (typeof RecordStatus)[keyof typeof RecordStatus];

export type TimerChange = 'create' | 'update' | 'patch' | 'enable' | 'disable' | 'complete' | 'existing';

export interface NotifyHttpParam {
  url: string;
  /** Case-insensitive; stored upper-case. */
  method: CallbackMethod | Lowercase<CallbackMethod>;
  /** `map[string][]string`; a single string is stored as a one-element array. */
  header?: Record<string, string | string[]>;
  body?: string;
  /** Per-timer callback timeout (ms). */
  timeoutMs?: number;
  /** Fill `{{placeholder}}`s in url, header values and body per fire. */
  template?: boolean;
}

export interface RetryPolicy {
  maxAttempts?: number;
  backoffMs?: number;
}

/** The definition fields of create and PUT: exactly one of `cron`, `runAt`, `every`. */
export interface TimerDefinition {
  name: string;
  cron?: string;
  runAt?: Instant;
  every?: string;
  timeZone?: string;
  startAt?: Instant;
  endAt?: Instant;
  maxFires?: number;
  notifyHTTPParam: NotifyHttpParam;
  retryPolicy?: RetryPolicy;
  misfirePolicy?: MisfirePolicy;
  overlapPolicy?: OverlapPolicy;
  catchupPolicy?: CatchupPolicy;
  catchupWindowMs?: number;
  jitterMs?: number;
  /** Needs jitterMs > 0: over the capacity, the api moves the fires within the jitter instead of 429. */
  autoSpread?: boolean;
  dstGap?: DstGap;
  dstOverlap?: DstOverlap;
  /** Where this timer's failure notifications go instead of the app's webhook; in a PATCH, null removes it. */
  failureWebhook?: FailureWebhook | null;
}

export interface TimerRef {
  id: TimerId;
  app: string;
}

export interface CreateTimerRequest extends TimerDefinition {
  app: string;
}

export interface CreateTimerOptions {
  /** 1-255 printable ASCII characters: a repeat answers the first result; also makes the create safe to retry. */
  idempotencyKey?: string;
}

/** POST def/batch: timers of one app, created (and enabled with `enable`) all or nothing. */
export interface CreateTimersRequest {
  app: string;
  /** Enable each timer as it is created (default false). */
  enable?: boolean;
  /** 1..TIMER_API_BATCH_MAX (default 500) definitions; `app` may be left out of each. */
  timers: (TimerDefinition & { app?: string })[];
}

/** PUT: the whole definition plus the id and the version it was made against. */
export interface UpdateTimerRequest extends CreateTimerRequest {
  id: TimerId;
  version: number;
}

/** PATCH: only the fields to change; `notifyHTTPParam.header`/`.body` null removes them. */
export interface PatchTimerRequest extends TimerRef, Partial<Omit<TimerDefinition, 'notifyHTTPParam'>> {
  version: number;
  notifyHTTPParam?: Partial<Omit<NotifyHttpParam, 'header' | 'body'>> & { header?: NotifyHttpParam['header'] | null; body?: string | null };
}

export interface PageQuery {
  pageIndex?: number;
  pageSize?: number;
}

export interface ListTimersQuery extends PageQuery {
  app: string;
  /** Substring of the name. */
  name?: string;
  status?: TimerStatus;
}

export interface TimerVersionsQuery extends TimerRef, PageQuery {}

export interface RecordsQuery extends PageQuery {
  app: string;
  timerID?: TimerId;
  /** `<timerId>-<runAtMs>`. */
  fireID?: string;
  status?: RecordStatus;
  from?: Instant;
  to?: Instant;
  includePending?: boolean;
}

export interface AccountingQuery {
  app: string;
  from?: number;
  to?: number;
}

export interface NotifyHttpParamView {
  url: string;
  method: CallbackMethod;
  header?: Record<string, string[]>;
  body?: string;
  timeoutMs?: number;
  template?: boolean;
}

export interface TimerDefinitionView {
  name: string;
  cron: string | null;
  runAt: number | null;
  every: string | null;
  timeZone: string;
  startAt: number | null;
  endAt: number | null;
  maxFires: number | null;
  notifyHTTPParam: NotifyHttpParamView;
  status: TimerStatus;
  retryPolicy: Required<RetryPolicy>;
  misfirePolicy: MisfirePolicy;
  // Optional: apis before these extensions do not answer them.
  overlapPolicy?: OverlapPolicy;
  catchupPolicy?: CatchupPolicy | null;
  catchupWindowMs?: number | null;
  jitterMs?: number;
  autoSpread?: boolean;
  /** With autoSpread: the delay of every fire the api chose; null without. */
  spreadOffsetMs?: number | null;
  dstGap?: DstGap;
  dstOverlap?: DstOverlap;
  /** This timer's own failure webhook (header values as lists); null: the app's. */
  failureWebhook?: FailureWebhook | null;
}

export interface Timer extends TimerDefinitionView {
  id: number;
  app: string;
  version: number;
  createdAt: number;
  /** GET only: the next fire times (epoch ms, ascending) after now. */
  nextFireTimes?: number[];
  /** GET only: those of `nextFireTimes` a maintenance window covers; absent when none is. */
  maintenance?: CoveredFire[];
}

export type MaintenancePolicy = 'skip' | 'defer';

export interface CoveredFire {
  at: number;
  windowId: string;
  policy: MaintenancePolicy;
  /** The end of the window's occurrence: where a deferred fire goes. */
  until: number;
}

/** A fixed window (`from`, `to`) or a recurring one (`cron`, `durationMs`), for the whole app or some timers. */
export interface CreateMaintenanceRequest {
  app: string;
  timerIds?: TimerId[];
  from?: Instant;
  to?: Instant;
  cron?: string;
  durationMs?: number;
  policy: MaintenancePolicy;
}

export interface MaintenanceWindow {
  id: string;
  app: string;
  /** null: every timer of the app. */
  timerIds: string[] | null;
  from: number | null;
  to: number | null;
  cron: string | null;
  durationMs: number | null;
  policy: MaintenancePolicy;
  /** A recurring window's next start; null for a fixed one. */
  nextStart: number | null;
  createdAt: number;
}

export interface TimerVersion extends TimerDefinitionView {
  version: number;
  change: TimerChange;
  changedAt: number;
}

export interface Page<T> {
  data: T[];
  /** Items matching the query over all pages. */
  total: number;
}

export interface CreateTimerResult {
  id: number;
  version: number;
  /** True when the api answered the stored result of an earlier create with the same Idempotency-Key. */
  replayed: boolean;
}

export interface BatchCreatedTimer {
  id: number;
  /** 1, or 2 when enabled (create, then enable, as in its versions). */
  version: number;
  enabled: boolean;
  /** Fires pre-created by the enable; 0 when not enabled. */
  fires: number;
}

export interface CreateTimersResult {
  /** In the order given. */
  timers: BatchCreatedTimer[];
  /** True when the api answered the stored result of an earlier batch with the same Idempotency-Key. */
  replayed: boolean;
}

export interface EditResult {
  id: number;
  version: number;
  changed: boolean;
  superseded: number;
  fires: number;
}

export interface EnableResult {
  changed: boolean;
  fires: number;
  until: number;
  version: number;
}

export interface DisableResult {
  changed: boolean;
  version: number;
  removedFires: number;
}

export interface RunResult {
  fireId: string;
  runAt: number;
}

export interface Attempt {
  attempt: number;
  startedAt: number;
  httpStatus: number | null;
  costMs: number | null;
  error: string | null;
}

export interface TaskRecord {
  fireId: string;
  timerID: number;
  app: string;
  runAt: number;
  status: RecordStatus;
  attempt: number;
  httpStatus: number | null;
  costMs: number | null;
  latenessMs: number | null;
  error: string | null;
  output: string | null;
  attempts?: Attempt[];
  /** Created by a backfill. */
  backfill?: boolean;
}

/** A schedule as create takes it, and how far to look; nothing is created. */
export interface PreviewQuery extends Partial<Pick<TimerDefinition, 'cron' | 'runAt' | 'every' | 'timeZone' | 'startAt' | 'endAt' | 'dstGap' | 'dstOverlap'>> {
  /** First instant looked at (default now). */
  from?: Instant;
  /** How many fires (default 10). */
  count?: number;
}

export interface PreviewFire {
  /** Epoch ms (for `skipped`: the instant of the gap, not a fire). */
  at: number;
  utc: string;
  /** Wall time in the zone with its offset. */
  local: string;
  dst?: 'shifted' | 'repeated' | 'skipped';
  /** shifted and skipped: the wall time the cron named, which did not exist. */
  nominal?: string;
}

export interface PreviewResult {
  timeZone: string;
  fires: PreviewFire[];
}

export interface BackfillRequest extends TimerRef {
  from: Instant;
  /** Exclusive, at most now. */
  to: Instant;
}

export interface BackfillResult {
  fires: number;
  created: number;
  existing: number;
  published: number;
}

export interface AppView {
  app: string;
}

export interface IssuedToken {
  id: number;
  /** Shown once. */
  token: string;
}

export interface SecretView {
  /** Shown once. */
  secret: string;
}

export interface PauseState {
  app: string;
  changed: boolean;
  paused: boolean;
  pausedAt: number | null;
  resumedAt: number | null;
  missedFires: number;
}

export interface WindowAccount {
  windowStart: number;
  windowEnd: number;
  expected: number;
  delivered: number;
  failed: number;
  missed: number;
  settled: number;
  open: number;
  finished: boolean;
}

export interface Accounting {
  app: string;
  windowMs: number;
  from: number;
  to: number;
  windows: WindowAccount[];
  unsettledFinished: number;
}

export interface OverviewQuery {
  /** The admin: one app instead of all apps. An app token always sees its own app. */
  app?: string;
  /** Default: one hour before `to`; rounded down to a multiple of bucketMs. [from, to) spans at most 24 h. */
  from?: number;
  /** Exclusive; default now. */
  to?: number;
  /** 1,000-3,600,000 (default 60,000); at most 3600 buckets. */
  bucketMs?: number;
}

/** Fires of one bucket of run_at: `fires` = delivered + failed + missed + open. */
export interface OverviewBucket {
  start: number;
  /** Exclusive; the last bucket ends at `to`. */
  end: number;
  fires: number;
  firesPerSecond: number;
  delivered: number;
  failed: number;
  missed: number;
  open: number;
  /** Nearest-rank percentiles of the delivered fires' lateness; null without any. */
  latenessP50Ms: number | null;
  latenessP99Ms: number | null;
}

export interface Overview {
  /** null: all apps. */
  app: string | null;
  from: number;
  to: number;
  bucketMs: number;
  now: number;
  totals: Omit<OverviewBucket, 'start' | 'end'> & {
    /** Delivered fires the percentiles are taken over. */
    latenessFires: number;
    /** More delivered fires than the api reads: the percentiles are those of the latest. */
    latenessCapped: boolean;
  };
  /** Every bucket of [from, to), ascending. */
  buckets: OverviewBucket[];
  /** Pending fires whose run_at has passed. */
  backlog: { pending: number; capped: boolean; oldestRunAt: number | null };
}

export interface DeadLetter {
  fireId: string;
  timerId: string;
  app: string;
  runAt: number;
  failedAt: number;
  attempts: number;
  reason: 'attempts exhausted' | 'not retryable' | string;
  error: string | null;
  httpStatus: number | null;
}

export interface DeadLettersQuery extends PageQuery {
  app: string;
}

/** Exactly one of `fireIds`, `timerId`, `all`. */
export type DeadLetterSelection = { app: string } & ({ fireIds: string[] } | { timerId: TimerId } | { all: true });

export interface ReplayResult {
  replayed: number;
  fireIds: string[];
  /** `fireIds` given that are not dead letters of the app. */
  notFound: string[];
  /** Dead letters the selector still holds (a request replays at most 500): repeat the request. */
  remaining: number;
}

export interface PurgeResult {
  purged: number;
}

export interface FailureWebhook {
  url: string;
  headers?: Record<string, string | string[]>;
}

export interface FailureWebhookState {
  app: string;
  failureWebhook: FailureWebhook | null;
}

export interface QuotaValues {
  maxTimers: number;
  maxFiresPerMinute: number;
  minIntervalMs: number;
}

/** PUT: each field left out or null is the default, 0 is no limit. */
export interface SetQuotaRequest {
  app: string;
  maxTimers?: number | null;
  maxFiresPerMinute?: number | null;
  minIntervalMs?: number | null;
}

export interface QuotaState {
  app: string;
  quota: QuotaValues;
  set: { maxTimers: number | null; maxFiresPerMinute: number | null; minIntervalMs: number | null };
  usage: { timers: number; firesPerMinute: number; busiestMinute: number | null; until: number };
}

export interface LoadQuery {
  /** Admin only: one app instead of all. */
  app?: string;
  from?: number;
  to?: number;
}

export interface ProjectedLoad {
  app: string | null;
  from: number;
  to: number;
  capacityPerSec: number;
  peak: { at: number; fires: number } | null;
  perSecond: number[];
}

/** `/health` (readiness, 200 or 503) and `/health/live`; not an envelope. */
export interface HealthReport {
  /** True for a 200. */
  ok: boolean;
  status: string;
  info?: Record<string, unknown>;
  error?: Record<string, unknown>;
  details?: Record<string, unknown>;
}
