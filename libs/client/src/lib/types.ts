// Request and answer shapes of the api: aliases of the types generated from the OpenAPI document it
// serves (openapi.generated.ts; client.int-spec.ts fails when that file is stale). Only what the
// document cannot say is written here: runtime constants, the client's own options and results, and
// three request fields the api accepts more loosely than its schema reads (marked below).
import type { components, operations } from './openapi.generated';

type Schemas = components['schemas'];
/** The query parameters of an operation. */
type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
/**
 * A request body as callers write it: a field the schema allows to be null may be left out (the api
 * applies its default; in a PATCH, null clears the field). Nest's generator marks fields with a
 * default as required and nullable.
 */
type Loose<T> = { [K in keyof T as null extends T[K] ? never : K]: T[K] } & { [K in keyof T as null extends T[K] ? K : never]?: T[K] };

/** The api takes any case (stored upper-case); its schema lists the upper-case names only. */
export type CallbackMethod = Schemas['NotifyHttpParamDto']['method'];
export type MisfirePolicy = Schemas['TimerView']['misfirePolicy'];
export type OverlapPolicy = Schemas['TimerView']['overlapPolicy'];
export type CatchupPolicy = NonNullable<Schemas['TimerView']['catchupPolicy']>;
/** A fixed-hour cron's wall times in a DST gap: at the gap's end, or not at all. */
export type DstGap = Schemas['TimerView']['dstGap'];
/** A fixed-hour cron's wall times in a DST overlap: the first occurrence, or both. */
export type DstOverlap = Schemas['TimerView']['dstOverlap'];
/** An instant: epoch milliseconds, or ISO 8601 with `Z` or an offset. Answers always carry epoch ms. */
export type Instant = number | string;
/** Timer ids are JSON numbers in answers; requests take a number or a digit string. */
export type TimerId = Schemas['TimerRefDto']['id'];

/** `status` of a timer. */
export const TimerStatus = { Disabled: 1, Enabled: 2, Completed: 3 } as const satisfies Record<string, Schemas['TimerView']['status']>;
export type TimerStatus = Schemas['TimerView']['status'];

/** `status` of a fire record. */
export const RecordStatus = { Pending: 0, Running: 1, Succeeded: 2, Failed: 3, Missed: 4 } as const satisfies Record<string, Schemas['TaskView']['status']>;
export type RecordStatus = Schemas['TaskView']['status'];

/**
 * Every record status: number, name and meaning. The client's own copy of the service's vocabulary,
 * since it ships without the service's libs; its test holds it against the served OpenAPI document.
 */
export const RECORD_STATUSES: readonly { value: RecordStatus; name: string; meaning: string }[] = [
  { value: 0, name: 'pending', meaning: 'waiting for its time, a retry or a hand-back' },
  { value: 1, name: 'running', meaning: 'claimed by an executor: its callback is under way' },
  { value: 2, name: 'succeeded', meaning: 'its callback answered 2xx' },
  { value: 3, name: 'failed', meaning: 'its attempts are spent or the answer was not retryable: a dead letter' },
  { value: 4, name: 'missed', meaning: 'never to be delivered (misfire policy, pause, maintenance, superseded), with the reason recorded' },
];

/** A record status's name by its number (`pending`, `running`, ...). */
export const RECORD_STATUS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(RECORD_STATUSES.map((s) => [s.value, s.name]));

export type TimerChange = Schemas['TimerVersionView']['change'];

/** A header given as one string is stored as a one-element array; the schema reads arrays only. */
type LooseHeader = { header?: Record<string, string | string[]> | null };
type LooseMethod<M> = { method: M | Lowercase<M & string> };

export type NotifyHttpParam = Loose<Omit<Schemas['NotifyHttpParamDto'], 'method' | 'header'>> & LooseMethod<CallbackMethod> & LooseHeader;
export type RetryPolicy = Loose<Schemas['RetryPolicyDto']>;
export type FailureWebhook = Schemas['FailureWebhookDto'];

export type TimerRef = Schemas['TimerRefDto'];
export type CreateTimerRequest = Loose<Omit<Schemas['CreateTimerDto'], 'notifyHTTPParam' | 'retryPolicy'>> & { notifyHTTPParam: NotifyHttpParam; retryPolicy?: RetryPolicy | null };
/** The definition fields of create and PUT: exactly one of `cron`, `runAt`, `every`. */
export type TimerDefinition = Omit<CreateTimerRequest, 'app'>;
export type CreateTimersRequest = Loose<Omit<Schemas['CreateTimerBatchDto'], 'timers'>> & { timers: (TimerDefinition & { app?: string })[] };
export type UpdateTimerRequest = CreateTimerRequest & Pick<Schemas['UpdateTimerDto'], 'id' | 'version'>;
export type PatchTimerRequest = Loose<Omit<Schemas['PatchTimerDto'], 'notifyHTTPParam' | 'retryPolicy'>> & {
  retryPolicy?: RetryPolicy | null;
  notifyHTTPParam?: Loose<Omit<Schemas['PatchNotifyHttpParamDto'], 'method' | 'header'>> & Partial<LooseMethod<CallbackMethod>> & LooseHeader;
};
export type RotateSecretRequest = Loose<Schemas['RotateSecretDto']>;
export type CreateMaintenanceRequest = Loose<Schemas['CreateMaintenanceDto']>;
export type CalendarExclude = Schemas['CalendarExcludeView'];
export type CreateCalendarRequest = Loose<Omit<Schemas['CreateCalendarDto'], 'exclude'>> & { exclude: CalendarExclude };
export type PutCalendarRequest = Loose<Omit<Schemas['PutCalendarDto'], 'exclude'>> & { exclude: CalendarExclude };
export type Calendar = Schemas['CalendarView'];
export type CalendarEdit = Schemas['CalendarEditView'];
export type CalendarMark = Schemas['CalendarMarkView'];
export type BackfillRequest = Schemas['BackfillDto'];
export type SetQuotaRequest = Loose<Schemas['PutQuotaDto']>;
/** Exactly one selector (the schema lists them side by side). */
export type DeadLetterSelection = { app: string } & ({ fireIds: string[] } | { timerId: TimerId } | { all: true });

export interface CreateTimerOptions {
  /** 1-255 printable ASCII characters: a repeat answers the first result; also makes the create safe to retry. */
  idempotencyKey?: string;
}

export interface PageQuery {
  pageIndex?: number;
  pageSize?: number;
}
export type ListTimersQuery = Query<'listTimers'>;
export type TimerVersionsQuery = Query<'listTimerVersions'>;
export type RecordsQuery = Omit<Query<'listRecords'>, 'timerID'> & { timerID?: TimerId };
export type AccountingQuery = Query<'getAppAccounting'>;
export type OverviewQuery = Query<'getOverview'>;
export type LoadQuery = Query<'getProjectedLoad'>;
export type DeadLettersQuery = Query<'listDeadLetters'>;
export type PreviewQuery = Query<'previewFireTimes'>;
export type ListAppsQuery = Query<'listApps'>;
export type ListTokensQuery = Query<'listAppTokens'>;

export type NotifyHttpParamView = Schemas['NotifyHttpParamView'];
export type Timer = Schemas['TimerView'];
/** A timer's definition fields as answers carry them. */
export type TimerDefinitionView = Omit<Timer, 'id' | 'app' | 'version' | 'createdAt' | 'nextFireTimes' | 'maintenance' | 'calendar'>;
export type TimerVersion = Schemas['TimerVersionView'];
export type CoveredFire = Schemas['CoveredFireView'];
export type MaintenancePolicy = Schemas['MaintenanceWindowView']['policy'];
export type MaintenanceWindow = Schemas['MaintenanceWindowView'];

/** A list answer: one page and the total. */
export interface Page<T> {
  data: T[];
  total: number;
}

/** `replayed`: the answer of an earlier create with the same `Idempotency-Key` (`Idempotent-Replayed` header). */
export type CreateTimerResult = Pick<Schemas['CreateTimerResponse'], 'id' | 'version'> & { replayed: boolean };
export type BatchCreatedTimer = Schemas['BatchCreatedTimer'];
export type CreateTimersResult = Schemas['BatchCreateResult'] & { replayed: boolean };
export type EditResult = Schemas['EditResult'];
export type EnableResult = Schemas['EnableResult'];
export type DisableResult = Schemas['DisableResult'];
export type RunResult = Schemas['RunResult'];
export type Attempt = Schemas['AttemptView'];
export type TaskRecord = Schemas['TaskView'];
export type PreviewFire = Schemas['PreviewFireView'];
export type PreviewResult = Schemas['PreviewResult'];
export type BackfillResult = Schemas['BackfillResult'];
export type AppView = Schemas['AppView'];
export type IssuedToken = Schemas['IssuedToken'];
export type AppSummary = Schemas['AppSummaryView'];
/** A token as listed: id, label, times; never the token. */
export type AppToken = Schemas['TokenView'];
export type SecretView = Schemas['SecretView'];
export type PauseState = Schemas['PauseView'];
export type WindowAccount = Schemas['WindowAccountView'];
export type Accounting = Schemas['AccountingData'];
export type OverviewBucket = Schemas['OverviewBucketView'];
export type Overview = Schemas['OverviewData'];
export type DeadLetter = Schemas['DeadLetterView'];
export type ReplayResult = Schemas['ReplayView'];
export type PurgeResult = Schemas['PurgeView'];
export type FailureWebhookState = Schemas['FailureWebhookView'];
export type QuotaValues = Schemas['QuotaValues'];
export type QuotaState = Schemas['QuotaView'];
export type ProjectedLoad = Schemas['LoadView'];

/** `/health` (readiness, 200 or 503) and `/health/live`; not an envelope. */
export interface HealthReport {
  /** True for a 200. */
  ok: boolean;
  status: string;
  info?: Record<string, unknown>;
  error?: Record<string, unknown>;
  details?: Record<string, unknown>;
}
