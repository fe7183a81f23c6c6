import {
  AppSummary,
  AppToken,
  CreateTimerRequest,
  DeadLetter,
  IssuedToken,
  Overview,
  PatchTimerRequest,
  PauseState,
  PreviewQuery,
  PreviewResult,
  PurgeResult,
  RECORD_STATUS_NAMES,
  RecordsQuery,
  RecordStatus,
  ReplayResult,
  TaskRecord,
  Timer,
  TimerApiError,
  TimerClient,
  TimerStatus,
  TimerVersion,
  UpdateTimerRequest,
} from '@timer/client';
import { fieldErrors } from './field-errors';

export type { AppSummary, AppToken, DeadLetter, IssuedToken, Overview, PreviewResult, PurgeResult, ReplayResult, TaskRecord, Timer, TimerVersion };
/** Which dead letters a replay or purge acts on. */
export type LetterSelection = { fireIds: string[] } | { timerId: string } | { all: true };
/** What a create form sends (the app comes from the session). */
export type TimerInput = Omit<CreateTimerRequest, 'app'>;
/** What an edit sends: only the fields changed. */
export type TimerChange = Omit<PatchTimerRequest, 'app' | 'id' | 'version'>;

export const TIMER_STATUS: Readonly<Record<number, string>> = { 1: 'disabled', 2: 'enabled', 3: 'completed' };
/** A record status's name (the client's vocabulary), also the CSS class of its colour. */
export const TASK_STATUS = RECORD_STATUS_NAMES;

export interface Session {
  token: string;
  app: string;
}

/** The HTTP status of a failed call (TimerApiError), undefined for a network failure or anything else. */
export function statusOf(e: unknown): number | undefined {
  return e instanceof TimerApiError ? e.status : undefined;
}

/** The message of each field a refused request (400) names; {} for any other failure. */
export function fieldsOf(e: unknown): Record<string, string> {
  return e instanceof TimerApiError && e.status === 400 ? fieldErrors(e.message) : {};
}

/** The current version a stale edit was refused with (409). */
export function currentVersionOf(e: unknown): number | undefined {
  return e instanceof TimerApiError && e.status === 409 ? (e.currentVersion ?? -1) : undefined;
}

/** The typed client (@timer/client) bound to the session's token and app, same origin. */
export class Api {
  private readonly client: TimerClient;

  constructor(private readonly session: Session) {
    this.client = new TimerClient({ baseUrl: window.location.origin, token: session.token });
  }

  get app(): string {
    return this.session.app;
  }

  /** Issued app tokens are always `tmr_...` (apps/api README); anything else signed in is the admin token. */
  get isAdmin(): boolean {
    return !this.session.token.startsWith('tmr_');
  }

  listTimers(q: { name?: string; status?: number; pageIndex: number; pageSize: number }) {
    return this.client.listTimers({ app: this.app, ...q, status: q.status as TimerStatus | undefined });
  }

  getTimer(id: number | string): Promise<Timer> {
    return this.client.getTimer({ app: this.app, id });
  }

  createTimer(input: TimerInput) {
    return this.client.createTimer({ app: this.app, ...input });
  }

  patchTimer(id: number, version: number, change: TimerChange) {
    return this.client.patchTimer({ app: this.app, id, version, ...change });
  }

  /** A definition replaced whole (PUT): how a version is restored. */
  replaceTimer(id: number, version: number, def: Omit<UpdateTimerRequest, 'app' | 'id' | 'version'>) {
    return this.client.updateTimer({ ...def, app: this.app, id, version });
  }

  /** The versions of a timer, newest first (the first is the current definition). */
  versions(id: number, pageIndex = 1, pageSize = 20): Promise<{ data: TimerVersion[]; total: number }> {
    return this.client.listTimerVersions({ app: this.app, id, pageIndex, pageSize });
  }

  /** The next fire times of a schedule, nothing created (the service's own preview). */
  preview(q: PreviewQuery): Promise<PreviewResult> {
    return this.client.previewFireTimes(q);
  }

  pauseApp(): Promise<PauseState> {
    return this.client.pauseApp({ app: this.app });
  }

  resumeApp(): Promise<PauseState> {
    return this.client.resumeApp({ app: this.app });
  }

  async enable(id: number): Promise<void> {
    await this.client.enableTimer({ app: this.app, id });
  }

  async disable(id: number): Promise<void> {
    await this.client.disableTimer({ app: this.app, id });
  }

  runNow(id: number) {
    return this.client.runTimer({ app: this.app, id });
  }

  deleteTimer(id: number): Promise<void> {
    return this.client.deleteTimer({ app: this.app, id });
  }

  records(q: Omit<RecordsQuery, 'app' | 'status'> & { status?: number }): Promise<{ data: TaskRecord[]; total: number }> {
    return this.client.listRecords({ app: this.app, ...q, status: q.status as RecordStatus | undefined });
  }

  /** The last hour per minute (the api's overview): the session's app, or every app (admin). */
  overview(allApps = false): Promise<Overview> {
    return this.client.getOverview({ app: allApps ? undefined : this.app });
  }

  deadLetters(q: { pageIndex: number; pageSize: number }): Promise<{ data: DeadLetter[]; total: number }> {
    return this.client.listDeadLetters({ app: this.app, ...q });
  }

  replayDeadLetters(sel: LetterSelection): Promise<ReplayResult> {
    return this.client.replayDeadLetters({ app: this.app, ...sel });
  }

  purgeDeadLetters(sel: LetterSelection): Promise<PurgeResult> {
    return this.client.purgeDeadLetters({ app: this.app, ...sel });
  }

  // Admin: these name their app themselves (any app, not only the session's).
  listApps(pageIndex: number, pageSize: number): Promise<{ data: AppSummary[]; total: number }> {
    return this.client.listApps({ pageIndex, pageSize });
  }

  /** Ids, labels and times of the app's tokens; never a token. */
  listTokens(app: string, includeRevoked = false): Promise<{ data: AppToken[]; total: number }> {
    return this.client.listAppTokens({ app, includeRevoked });
  }

  async createApp(app: string): Promise<void> {
    await this.client.createApp({ app });
  }

  issueToken(app: string, label?: string): Promise<IssuedToken> {
    return this.client.issueAppToken({ app, label });
  }

  revokeToken(app: string, tokenId: string): Promise<void> {
    return this.client.revokeAppToken({ app, tokenId });
  }

  async rotateSecret(app: string): Promise<string> {
    return (await this.client.rotateAppSecret({ app })).secret;
  }
}
