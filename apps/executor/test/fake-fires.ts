import type { FireRef } from '@timer/contracts';
import { ClaimResult, DefinitionChanges, FireClaimRequest, FireOutcome, FireState, NewTask, TaskStatus, TimerDefinition } from '@timer/dal';

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

  async stateMany(ks: FireRef[]): Promise<(FireState | null)[]> {
    this.stateReads += ks.length;
    return ks.map((k) => this.peek(k));
  }

  async recordOutcomes(os: FireOutcome[]): Promise<boolean[]> {
    return os.map((o) => {
      const r = this.rows.get(key(o));
      if (!r) return false;
      const held = o.firstClaim === true ? r.status === TaskStatus.Pending && r.attempt === o.attempt - 1 : r.claimedBy === o.token && r.attempt === o.attempt;
      if (!held) return false;
      Object.assign(r, {
        status: o.status,
        attempt: o.attempt,
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

  /** FireOutcomeRepository.fileOutcome: a new settled row, unless one exists. */
  async fileOutcome(o: FireOutcome, app: string): Promise<boolean> {
    if (this.rows.has(key(o))) return false;
    this.addRow(o.timerId, o.runAt, { app, status: o.status, attempt: o.attempt, httpStatus: o.httpStatus, costMs: o.costMs, latenessMs: o.latenessMs, error: o.error, output: o.output, claimedBy: o.claimedBy, claimedUntil: o.claimedUntil });
    return true;
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
