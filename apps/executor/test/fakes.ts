import type { CallbackRequest, CallbackResult, FireIdentity } from '@timer/callback';
import type { Clock } from '@timer/platform';
import { CALL_MARKS_CHUNK, type CallStart, type FireClaimAsk, type FireClaimBatch, type OverlapTurn } from '@timer/redis';
import type { TaskMessage } from '@timer/contracts';
import { TaskStatusValue, TimerDefinition, TimerEntity, TimerStatus } from '@timer/dal';

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

export { FakeFires, type FakeRow } from './fake-fires';

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
/** SliceBloom: a set, no false positives unless put in `items` by hand; `unknown` answers "no filter", `fail` throws. */
export class FakeBloom {
  readonly items = new Set<string>();
  checks = 0;
  unknown = false;
  fail = false;
  async add(items: { id: string }[]): Promise<number> {
    for (const it of items) this.items.add(it.id);
    return items.length;
  }
  async check(items: { id: string }[]): Promise<(boolean | null)[]> {
    this.checks++;
    if (this.fail) throw new Error('redis down');
    return items.map((it) => (this.unknown ? null : this.items.has(it.id)));
  }
}

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

/** FireClaims in memory, as its commands behave (TTLs aside): a value per fire id, and the claim epoch. */
export class FakeFireClaims {
  readonly values = new Map<string, string>();
  current: string | null = null;
  /** Pipelines sent, with their asks. */
  readonly batches: FireClaimAsk[][] = [];
  /** Set to make every command fail, as an unreachable Redis does. */
  fail = false;

  async claimMany(asks: readonly FireClaimAsk[], _ttlMs: number, epoch: string): Promise<FireClaimBatch> {
    if (this.fail) throw new Error('redis down');
    this.batches.push([...asks]);
    const created = this.current === null;
    this.current ??= epoch;
    const replies = asks.map((a) => {
      const held = this.values.get(a.fireId);
      if (held !== undefined) return { kind: 'held' as const, holder: held };
      if (a.token === null) return { kind: 'free' as const };
      this.values.set(a.fireId, a.token);
      return { kind: 'claimed' as const };
    });
    return { replies, epoch: this.current, created };
  }
  async epoch(epoch: string): Promise<{ epoch: string; created: boolean }> {
    if (this.fail) throw new Error('redis down');
    const created = this.current === null;
    this.current ??= epoch;
    return { epoch: this.current, created };
  }
  async reassert(claims: readonly { fireId: string; value: string }[]): Promise<boolean[]> {
    if (this.fail) throw new Error('redis down');
    return claims.map((c) => {
      const held = this.values.get(c.fireId);
      if (held === undefined) this.values.set(c.fireId, c.value);
      return held === undefined || held === c.value;
    });
  }
  async release(fireId: string, value: string): Promise<void> {
    if (this.values.get(fireId) === value) this.values.delete(fireId);
  }
  async takeOver(fireId: string, holder: string, token: string): Promise<boolean> {
    if (this.fail) throw new Error('redis down');
    if (this.values.get(fireId) !== holder) return false;
    this.values.set(fireId, token);
    return true;
  }
  /** FLUSHALL. */
  flush(): void {
    this.values.clear();
    this.current = null;
  }
}
