import type { CallbackRequest, CallbackResult, FireIdentity } from '@timer/callback';
import type { Clock } from '@timer/platform';
import { CALL_MARKS_CHUNK, type CallStart, type OverlapTurn } from '@timer/redis';
import type { FireRef, TaskMessage } from '@timer/contracts';
import { ClaimResult, DefinitionChanges, FireClaimRequest, FireOutcome, FireState, NewTask, TaskStatus, TaskStatusValue, TimerDefinition, TimerEntity, TimerStatus } from '@timer/dal';

/** A clock the test moves by hand; `sleep` advances it instead of waiting. */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(public current: number) {}
  now(): number {
    return this.current;
  }
  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.current += Math.max(0, ms);
  }
}

export interface FakeRow extends FireState {
  app: string;
  timerId: string;
  runAt: number;
  httpStatus: number | null;
  costMs: number | null;
  latenessMs: number | null;
  error: string | null;
  output: string | null;
}

const key = (k: FireRef) => `${k.timerId}-${k.runAt}`;

/**
 * The tasks table (and the timer definitions) in memory, standing in for FireClaimRepository,
 * FireOutcomeRepository, TimerDefinitionRepository and TaskRepository.insertIgnore, with the same
 * claim and fenced-write rules as their SQL (libs/dal/test/fire.repository.int-spec.ts checks the
 * SQL against MariaDB).
 */
export class FakeFires {
  readonly rows = new Map<string, FakeRow>();
  readonly defs = new Map<string, TimerDefinition>();
  claims = 0;
  stateReads = 0;

  addRow(timerId: string, runAt: number, patch: Partial<FakeRow> = {}): FakeRow {
    const row: FakeRow = {
      app: 'app',
      timerId,
      runAt,
      status: TaskStatus.Pending,
      attempt: 0,
      claimedBy: null,
      claimedUntil: null,
      httpStatus: null,
      costMs: null,
      latenessMs: null,
      error: null,
      output: null,
      ...patch,
    };
    this.rows.set(key(row), row);
    return row;
  }

  row(timerId: string, runAt: number): FakeRow | undefined {
    return this.rows.get(key({ timerId, runAt }));
  }

  async claim(c: FireClaimRequest): Promise<boolean> {
    this.claims++;
    const r = this.rows.get(key(c));
    if (!r) return false;
    const m = c.attempt;
    const until = r.claimedUntil ?? 0;
    const ok =
      (r.status === TaskStatus.Pending && r.attempt === m - 1) ||
      (r.status === TaskStatus.Running && r.attempt === m - 1 && (r.claimedBy === null || until < c.nowMs)) ||
      (r.status === TaskStatus.Running && r.attempt === m && until < c.nowMs);
    if (ok) Object.assign(r, { status: TaskStatus.Running, attempt: m, claimedBy: c.token, claimedUntil: c.nowMs + c.leaseMs });
    return ok;
  }

  /** FireClaimRepository.claimMany: a refused claim reports the row's state (no extra read, as in SQL). */
  async claimMany(cs: FireClaimRequest[]): Promise<ClaimResult[]> {
    const out: ClaimResult[] = [];
    for (const c of cs) {
      if (await this.claim(c)) out.push({ claimed: true });
      else out.push({ claimed: false, state: this.peek(c) });
    }
    return out;
  }

  private peek(k: FireRef): FireState | null {
    const r = this.rows.get(key(k));
    return r ? { status: r.status, attempt: r.attempt, claimedBy: r.claimedBy, claimedUntil: r.claimedUntil } : null;
  }

  /** FireClaimRepository.takeOver: only while `holder` still holds the fire at this attempt or the one before. */
  async takeOver(c: FireClaimRequest, holder: string): Promise<boolean> {
    const r = this.rows.get(key(c));
    if (!r || r.status !== TaskStatus.Running || r.claimedBy !== holder || (r.attempt !== c.attempt && r.attempt !== c.attempt - 1)) return false;
    Object.assign(r, { attempt: c.attempt, claimedBy: c.token, claimedUntil: c.nowMs + c.leaseMs });
    return true;
  }

  async reopenFailed(k: FireRef): Promise<boolean> {
    const r = this.rows.get(key(k));
    if (!r || r.status !== TaskStatus.Failed) return false;
    Object.assign(r, { status: TaskStatus.Pending, attempt: 0, claimedBy: null, claimedUntil: null });
    return true;
  }

  /** FireClaimRepository.extend */
  async extend(k: FireRef, token: string, untilMs: number): Promise<boolean> {
    const r = this.rows.get(key(k));
    if (!r || r.status !== TaskStatus.Running || r.claimedBy !== token) return false;
    r.claimedUntil = untilMs;
    return true;
  }

  async state(k: FireRef): Promise<FireState | null> {
    this.stateReads++;
    return this.peek(k);
  }

  async recordOutcomes(os: FireOutcome[]): Promise<boolean[]> {
    return os.map((o) => {
      const r = this.rows.get(key(o));
      if (!r || r.claimedBy !== o.token || r.attempt !== o.attempt) return false;
      Object.assign(r, {
        status: o.status,
        httpStatus: o.httpStatus,
        costMs: o.costMs,
        latenessMs: o.latenessMs,
        error: o.error,
        output: o.output,
        claimedBy: o.claimedBy,
        claimedUntil: o.claimedUntil,
      });
      return true;
    });
  }

  /** Change log for changesSince: what tests changed (a timer id or `app:<app>`), in order. */
  readonly changeLog: string[] = [];
  failChanges = false;
  /** Queries of definitions by id (`definitions`), for the cache's batching. */
  definitionQueries = 0;

  /** Records a change of a timer (or, with `app:` prefix, an app) as its updated_at would. */
  touch(what: string): void {
    this.changeLog.push(what);
  }

  /** TimerDefinitionRepository.changesSince, with the log position as the watermark. */
  async changesSince(since: string | null, limit: number): Promise<DefinitionChanges> {
    if (this.failChanges) throw new Error('changes poll failed');
    const watermark = String(this.changeLog.length);
    if (since === null) return { watermark, timerIds: [], apps: [] };
    const seen = this.changeLog.slice(Number(since));
    const ids = seen.filter((c) => !c.startsWith('app:'));
    return { watermark, timerIds: ids.length > limit ? null : ids, apps: seen.filter((c) => c.startsWith('app:')).map((c) => c.slice(4)) };
  }

  async definition(id: string): Promise<TimerDefinition | null> {
    return this.defs.get(id) ?? null;
  }

  async definitions(ids: readonly string[]): Promise<TimerDefinition[]> {
    this.definitionQueries++;
    return [...new Set(ids)].map((id) => this.defs.get(id)).filter((d): d is TimerDefinition => d !== undefined);
  }

  async definitionsDueBetween(from: number, to: number): Promise<TimerDefinition[]> {
    const ids = new Set([...this.rows.values()].filter((r) => r.status === TaskStatus.Pending && r.runAt >= from && r.runAt < to).map((r) => r.timerId));
    return [...ids].map((id) => this.defs.get(id)).filter((d): d is TimerDefinition => d !== undefined);
  }

  /** TaskRepository.insertIgnore */
  async insertIgnore(rows: NewTask[]): Promise<number> {
    let n = 0;
    for (const r of rows) {
      if (this.rows.has(key(r))) continue;
      this.addRow(r.timerId, r.runAt, { app: r.app });
      n++;
    }
    return n;
  }
}

export function timerDef(id: string, patch: Partial<TimerEntity> = {}, signingSecret: string | null = null): TimerDefinition {
  const timer = Object.assign(new TimerEntity(), {
    id,
    app: 'app',
    name: `t${id}`,
    liveName: `t${id}`,
    cron: '* * * * * *',
    runAt: null,
    timeZone: 'UTC',
    notifyHttpParam: { url: 'http://127.0.0.1:1/hook', method: 'POST', body: '{"x":1}' },
    status: TimerStatus.Enabled,
    maxAttempts: 3,
    backoffMs: 1000,
    misfirePolicy: 'fire_late',
    overlapPolicy: 'allow',
    catchupPolicy: null,
    catchupWindowMs: null,
    jitterMs: 0,
    version: 1,
    deletedAt: null,
    ...patch,
  });
  return { timer, signingSecret };
}

export class FakeCallback {
  readonly calls: { req: CallbackRequest; fire: FireIdentity; secret?: string }[] = [];
  results: CallbackResult[] = [];
  fallback: CallbackResult = { ok: true, status: 200, costMs: 3, output: 'ok', retryable: false };

  async deliver(req: CallbackRequest, fire: FireIdentity, secret?: string): Promise<CallbackResult> {
    this.calls.push({ req, fire, secret });
    return this.results.shift() ?? this.fallback;
  }
}

export class FakePublisher {
  readonly retries: { message: TaskMessage; at: number }[] = [];
  readonly deferred: { message: TaskMessage; at: number; recheck: boolean }[] = [];
  readonly deadLetters: { message: TaskMessage; properties: Record<string, string> }[] = [];

  async retry(message: TaskMessage, at: number): Promise<void> {
    this.retries.push({ message, at });
  }
  async defer(message: TaskMessage, at: number, recheck: boolean): Promise<void> {
    this.deferred.push({ message, at, recheck });
  }
  async deadLetter(message: TaskMessage, properties: Record<string, string>): Promise<void> {
    this.deadLetters.push({ message, properties });
  }
  readonly handedBack: { message: TaskMessage; at: number; deferrals: number }[] = [];
  async handBack(message: TaskMessage, at: number, deferrals: number): Promise<void> {
    this.handedBack.push({ message, at, deferrals });
  }
  readonly missedNotices: { message: TaskMessage; reason: string }[] = [];
  async missed(message: TaskMessage, reason: string): Promise<void> {
    this.missedNotices.push({ message, reason });
  }
}

export type StatusValue = TaskStatusValue;

/** ExecutorLiveness: this process is `exec-a`; processes in `dead` count as gone. */
export class FakeLiveness {
  readonly processId = 'exec-a';
  readonly dead = new Set<string>();
  token(seq: number): string {
    return `${this.processId}:${seq}`;
  }
  async isDead(token: string): Promise<boolean> {
    return this.dead.has(token.slice(0, token.lastIndexOf(':')));
  }
}

/** InFlightFires in memory, as its scripts behave (TTLs aside): the fire in flight and the one waiting, per timer. */
export class FakeInFlightFires {
  readonly inFlight = new Map<string, string>();
  readonly waiting = new Map<string, string>();

  async enter(timerId: string, fireId: string, policy: string): Promise<OverlapTurn> {
    const cur = this.inFlight.get(timerId);
    const w = this.waiting.get(timerId);
    if (cur === fireId || (cur === undefined && (w === undefined || w === fireId))) {
      this.inFlight.set(timerId, fireId);
      if (w === fireId) this.waiting.delete(timerId);
      return { kind: 'run' };
    }
    if (cur !== undefined && policy === 'buffer_one' && (w === undefined || w === fireId)) {
      this.waiting.set(timerId, fireId);
      return { kind: 'wait', holder: cur };
    }
    return { kind: 'skip', holder: (cur ?? w) as string };
  }

  async hold(timerId: string, fireId: string): Promise<boolean> {
    const cur = this.inFlight.get(timerId);
    if (cur !== undefined && cur !== fireId) return false;
    this.inFlight.set(timerId, fireId);
    return true;
  }

  async release(timerId: string, fireId: string): Promise<void> {
    if (this.inFlight.get(timerId) === fireId) this.inFlight.delete(timerId);
    if (this.waiting.get(timerId) === fireId) this.waiting.delete(timerId);
  }
}

/** CallMarks in memory, as its scripts behave (TTLs aside): per chunk key, its opening bit and the claims called and taken over. */
export class FakeCallMarks {
  readonly chunks = new Map<string, { open: boolean; called: Set<number>; taken: Set<number> }>();
  /** Set to make every command fail, as an unreachable Redis does. */
  fail = false;

  key(processId: string, chunk: number): string {
    return `${processId}:${chunk}`;
  }
  async open(processId: string, chunk: number): Promise<void> {
    this.check();
    this.chunk(processId, chunk).open = true;
  }
  async keep(processId: string, chunk: number): Promise<boolean> {
    this.check();
    return this.chunks.has(this.key(processId, chunk));
  }
  async close(processId: string, chunk: number): Promise<void> {
    this.check();
    this.chunk(processId, chunk).open = false;
  }
  async markMany(processId: string, chunk: number, indexes: readonly number[]): Promise<boolean[]> {
    this.check();
    const c = this.chunk(processId, chunk);
    return indexes.map((i) => {
      if (c.taken.has(i)) return false;
      c.called.add(i);
      return true;
    });
  }
  async takeOver(processId: string, chunk: number, index: number): Promise<CallStart> {
    this.check();
    const c = this.chunk(processId, chunk);
    c.taken.add(index);
    return !c.open ? 'unknown' : c.called.has(index) ? 'called' : 'not_called';
  }
  /** Whether the claim `token` (`<processId>:<seq>`) is marked as called. */
  called(token: string): boolean {
    const cut = token.lastIndexOf(':');
    const seq = Number(token.slice(cut + 1));
    return this.chunks.get(this.key(token.slice(0, cut), Math.floor(seq / CALL_MARKS_CHUNK)))?.called.has(seq % CALL_MARKS_CHUNK) ?? false;
  }
  private chunk(processId: string, chunk: number) {
    const key = this.key(processId, chunk);
    let c = this.chunks.get(key);
    if (!c) this.chunks.set(key, (c = { open: false, called: new Set(), taken: new Set() }));
    return c;
  }
  private check(): void {
    if (this.fail) throw new Error('redis down');
  }
}
