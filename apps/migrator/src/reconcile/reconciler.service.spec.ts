import { Logger } from '@nestjs/common';
import { TaskMessage } from '@timer/contracts';
import { OverdueFire, PauseWindow, TaskStatus } from '@timer/dal';
import { HeldLock, LedgerPause, LockOptions } from '@timer/redis';
import { Registry } from 'prom-client';
import { MigratorConfig, MigratorEnv } from '../config/migrator.env';
import { ReconcilerMetrics } from './reconciler.metrics';
import { Backlog, Ledger, Locks, Marks, OUTAGE_GRACE_MS, OUTAGE_RECOVERY_MS, PAUSE_HORIZON_MS, PAUSE_SETTLE_BATCH, PAUSE_SETTLE_LAG_MS, PauseMirror, Pauses, Publisher, ReconcilerService, RESCUE_HOLD_MAX_MS, RESCUE_MAX_BACKLOG_LAG_MS, RESCUE_MESSAGE_FIRES, rescueMessage } from './reconciler.service';

const T0 = Date.UTC(2030, 0, 1, 10, 30);

class FakeLedger implements Ledger {
  rows: OverdueFire[] = [];
  asked: { dueBefore: number; nowMs: number; limit: number; pauseEndedSince?: number }[] = [];
  missed: { app: string; fromMs: number; toMs: number; limit: number }[] = [];
  failMissPaused = false;
  async overdue(dueBefore: number, nowMs: number, limit: number, pauseEndedSince?: number) {
    this.asked.push({ dueBefore, nowMs, limit, pauseEndedSince });
    return this.rows.filter((r) => r.runAt < dueBefore).slice(0, limit);
  }
  async missPaused(app: string, fromMs: number, toMs: number, limit: number) {
    if (this.failMissPaused) throw new Error('mysql down (injected)');
    this.missed.push({ app, fromMs, toMs, limit });
    return 3;
  }
  async countPendingBefore(dueBefore: number) {
    return this.rows.filter((r) => r.status === TaskStatus.Pending && r.runAt < dueBefore).length;
  }
  async countOpenBefore(before: number) {
    return this.rows.filter((r) => r.runAt < before).length;
  }
}

class FakeMarks implements Marks {
  readonly marked = new Map<string, number>();
  /** Hand-back marks (`RescueMarks.handedBack`): fire id -> until. */
  readonly handedBack = new Map<string, number>();
  failHandedBack = false;
  now = T0;
  async waitingInBroker(ids: readonly string[]) {
    if (this.failHandedBack) throw new Error('redis down (injected)');
    return ids.map((id) => (this.handedBack.get(id) ?? 0) > this.now);
  }
  async mark(ids: readonly string[], ttlMs: number) {
    return ids.map((id) => {
      const until = this.marked.get(id);
      if (until !== undefined && until > this.now) return false;
      this.marked.set(id, this.now + ttlMs);
      return true;
    });
  }
}

class FakePublisher implements Publisher {
  sent: TaskMessage[] = [];
  /** Fires per message published. */
  messages: number[] = [];
  failFor = new Set<string>();
  async publish(t: TaskMessage) {
    await this.publishBatch([t]);
  }
  async publishBatch(tasks: readonly TaskMessage[]) {
    if (tasks.some((t) => this.failFor.has(t.fireId))) throw new Error('broker unavailable (injected)');
    this.sent.push(...tasks);
    this.messages.push(tasks.length);
  }
}

class FakeLocks implements Locks {
  held = false;
  async tryAcquire(o: LockOptions): Promise<HeldLock | undefined> {
    if (this.held) return undefined;
    this.held = true;
    return { resource: o.resource, token: 't', extend: async () => true, release: async () => !(this.held = false) };
  }
}

class FakePauses implements Pauses, PauseMirror {
  windows: PauseWindow[] = [];
  endedSince: number[] = [];
  synced: { ledger: readonly LedgerPause[]; nowMs: number }[] = [];
  failSync = false;
  async pauseWindows(endedSince: number) {
    this.endedSince.push(endedSince);
    return this.windows;
  }
  async sync(ledger: readonly LedgerPause[], nowMs: number) {
    if (this.failSync) throw new Error('redis down (injected)');
    this.synced.push({ ledger, nowMs });
    return { written: 0, removed: 0 };
  }
}

class FakeBacklog implements Backlog {
  lag: number | Error = 0;
  async lagMs() {
    if (this.lag instanceof Error) throw this.lag;
    return this.lag;
  }
}

function setup(env: Partial<MigratorEnv> = {}) {
  const clock = { now: () => T0 };
  const deps = { ledger: new FakeLedger(), publisher: new FakePublisher(), marks: new FakeMarks(), locks: new FakeLocks(), pauses: new FakePauses(), backlog: new FakeBacklog() };
  const registry = new Registry();
  const metrics = new ReconcilerMetrics(registry);
  const config = new MigratorConfig(Object.assign(new MigratorEnv(), env));
  const service = new ReconcilerService(deps.ledger, deps.publisher, deps.marks, deps.locks, clock, config, metrics, deps.pauses, deps.pauses, deps.backlog);
  const gauge = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value;
  const rescued = async (reason: string) => (await registry.getSingleMetric('timer_reconciler_rescued_total')!.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  return { ...deps, service, gauge, rescued };
}

const pending = (timerId: string, runAt: number): OverdueFire => ({ timerId, runAt, status: TaskStatus.Pending, attempt: 0, claimedBy: null });

describe('ReconcilerService', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  it('publishes fires past run_at + grace that nothing works on, with the attempt their claim expects', async () => {
    const s = setup();
    s.ledger.rows = [
      pending('1', T0 - 3_600_000), // stranded an hour ago
      { timerId: '2', runAt: T0 - 60_000, status: TaskStatus.Running, attempt: 1, claimedBy: 'exec:1:a:5' }, // holder gone, lease over
      { timerId: '3', runAt: T0 - 45_000, status: TaskStatus.Running, attempt: 2, claimedBy: null }, // its retry message is lost
      pending('4', T0 - 10_000), // within the grace: the pipeline may still be on it
    ];
    const result = await s.service.pass();
    expect(s.ledger.asked).toEqual([{ dueBefore: T0 - 30_000, nowMs: T0, limit: 1_000, pauseEndedSince: T0 - PAUSE_HORIZON_MS }]);
    expect(s.publisher.sent).toEqual([
      { timerId: '1', runAt: T0 - 3_600_000, fireId: `1-${T0 - 3_600_000}`, attempt: 1 },
      { timerId: '2', runAt: T0 - 60_000, fireId: `2-${T0 - 60_000}`, attempt: 1 },
      { timerId: '3', runAt: T0 - 45_000, fireId: `3-${T0 - 45_000}`, attempt: 3 },
    ]);
    expect(result).toEqual({ ran: true, overdue: 1, rescued: { pending: 1, stale_claim: 1, lost_retry: 1 }, failed: 0, pausedMissed: 0 });
    expect(await s.rescued('pending')).toBe(1);
    expect(await s.rescued('stale_claim')).toBe(1);
    expect(await s.gauge('timer_overdue_fires')).toBe(1);
    expect(await s.gauge('timer_unsettled_fires_finished_windows')).toBe(1); // the one of the previous hour
    expect(s.locks.held).toBe(false);
  });

  it('publishes a fire that stays overdue at most once a minute, and retries one whose publish failed', async () => {
    const s = setup();
    s.ledger.rows = [pending('1', T0 - 40_000)];
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 1 }, failed: 0 });
    s.ledger.rows.push(pending('2', T0 - 40_000));
    s.publisher.failFor.add(`2-${T0 - 40_000}`);
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 0 }, failed: 1 });
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 0 }, failed: 0 });
    expect(s.publisher.sent.map((t) => t.timerId)).toEqual(['1']);
    // The mark of a failed publish lapses with the others; a minute later both go out again.
    s.marks.now = T0 + 60_001;
    s.publisher.failFor.clear();
    await s.service.pass();
    expect(s.publisher.sent.map((t) => t.timerId)).toEqual(['1', '1', '2']);
  });

  it('rescues fires RESCUE_MESSAGE_FIRES to a message, and counts the fires of a message that failed as failed', async () => {
    const s = setup();
    const n = 2 * RESCUE_MESSAGE_FIRES + 50;
    s.ledger.rows = Array.from({ length: n }, (_, i) => pending(String(i), T0 - 100_000 + i));
    s.publisher.failFor.add(`${RESCUE_MESSAGE_FIRES}-${T0 - 100_000 + RESCUE_MESSAGE_FIRES}`); // in the second message
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: RESCUE_MESSAGE_FIRES + 50 }, failed: RESCUE_MESSAGE_FIRES });
    expect(s.publisher.messages).toEqual([RESCUE_MESSAGE_FIRES, 50]);
    expect(await s.rescued('pending')).toBe(RESCUE_MESSAGE_FIRES + 50);
  });

  it('holds pending fires back while the executors are far behind, and rescues them once the backlog is fresh', async () => {
    const s = setup();
    s.ledger.rows = [pending('1', T0 - 90_000), { timerId: '2', runAt: T0 - 60_000, status: TaskStatus.Running, attempt: 1, claimedBy: 'exec:1:a:5' }];
    s.backlog.lag = RESCUE_MAX_BACKLOG_LAG_MS + 1;
    // The pending fire is most likely in the backlog; a stale claim is not in any queue.
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 0, stale_claim: 1 } });
    expect(s.publisher.sent.map((t) => t.timerId)).toEqual(['2']);
    expect(await s.gauge('timer_executor_backlog_lag_seconds')).toBe((RESCUE_MAX_BACKLOG_LAG_MS + 1) / 1_000);
    expect(await s.gauge('timer_overdue_fires')).toBe(1); // still counted as overdue
    s.backlog.lag = RESCUE_MAX_BACKLOG_LAG_MS;
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 1 } });
    expect(s.publisher.sent.map((t) => t.timerId)).toEqual(['2', '1']);
  });

  it('rescues pending fires when the oldest message is so old that a consumer is more likely stuck than behind', async () => {
    const s = setup();
    s.ledger.rows = [pending('1', T0 - 900_000)];
    s.backlog.lag = RESCUE_HOLD_MAX_MS + 1;
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 1 } });
  });

  it('after a broker outage rescues fires 5 s past their time (not the 30 s grace) for a minute, once the backlog is fresh', async () => {
    const clock = { at: T0 };
    const s = setup();
    const service = new ReconcilerService(s.ledger, s.publisher, s.marks, new FakeLocks(), { now: () => clock.at }, new MigratorConfig(new MigratorEnv()), new ReconcilerMetrics(new Registry()), s.pauses, s.pauses, s.backlog);
    s.backlog.lag = new Error('broker down (injected)');
    await service.pass();
    expect(s.ledger.asked.at(-1)?.dueBefore).toBe(T0 - 30_000); // still down: the usual grace
    s.backlog.lag = 0;
    clock.at = T0 + 5_000;
    await service.pass();
    expect(s.ledger.asked.at(-1)?.dueBefore).toBe(T0 + 5_000 - OUTAGE_GRACE_MS);
    clock.at = T0 + 5_000 + OUTAGE_RECOVERY_MS;
    await service.pass();
    expect(s.ledger.asked.at(-1)?.dueBefore).toBe(T0 + 5_000 + OUTAGE_RECOVERY_MS - 30_000);
  });

  it('rescues pending fires as usual when the broker does not say how far behind the executors are', async () => {
    const s = setup();
    s.ledger.rows = [pending('1', T0 - 90_000)];
    s.backlog.lag = new Error('admin API down (injected)');
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 1 } });
  });

  it('leaves fires that a fair-delivery hand-back keeps on the retries topic (pending, or a retry without a holder) alone while their mark lives, and rescues them once it lapses; never holds a stale claim', async () => {
    const s = setup();
    const waiting = pending('1', T0 - 40_000);
    const lost = pending('2', T0 - 40_000);
    // Handed back too, but claimed since by an executor that died: a stale claim is never held.
    const crashed: OverdueFire = { timerId: '3', runAt: T0 - 60_000, status: TaskStatus.Running, attempt: 1, claimedBy: 'exec:1:a:5' };
    // A refused call's retry (no holder) that came back over its app's share and was handed back.
    const refused: OverdueFire = { timerId: '4', runAt: T0 - 50_000, status: TaskStatus.Running, attempt: 1, claimedBy: null };
    s.ledger.rows = [waiting, lost, crashed, refused];
    for (const r of [waiting, crashed, refused]) s.marks.handedBack.set(`${r.timerId}-${r.runAt}`, T0 + 20_000);
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 1, stale_claim: 1, lost_retry: 0 }, overdue: 2 });
    expect(s.publisher.sent.map((t) => t.timerId)).toEqual(['2', '3']);
    // The hand-backs' messages were lost after all: once their marks lapse, the fires are rescued.
    s.marks.now = T0 + 20_001;
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 1, lost_retry: 1 } });
    expect(s.publisher.sent.map((t) => t.timerId)).toEqual(['2', '3', '1', '4']);
  });

  it('rescues pending fires as usual when Redis does not say which wait on the retries topic', async () => {
    const s = setup();
    s.ledger.rows = [pending('1', T0 - 40_000)];
    s.marks.handedBack.set(`1-${T0 - 40_000}`, T0 + 20_000);
    s.marks.failHandedBack = true;
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 1 } });
  });

  it('paces the catch-up: at most TIMER_RECONCILER_BATCH fires a pass, oldest first', async () => {
    const s = setup({ TIMER_RECONCILER_BATCH: 2 });
    s.ledger.rows = [pending('1', T0 - 90_000), pending('2', T0 - 80_000), pending('3', T0 - 70_000)];
    await s.service.pass();
    expect(s.publisher.sent.map((t) => t.timerId)).toEqual(['1', '2']);
  });

  it('mirrors the pauses into Redis and records each pause interval\'s pending fires missed, up to a few seconds ago', async () => {
    const s = setup();
    s.pauses.windows = [
      { app: 'a', pausedAt: T0 - 600_000, resumedAt: null }, // paused now
      { app: 'b', pausedAt: T0 - 900_000, resumedAt: T0 - 300_000 }, // resumed five minutes ago
    ];
    const result = await s.service.pass();
    expect(s.pauses.endedSince).toEqual([T0 - PAUSE_HORIZON_MS]);
    expect(s.pauses.synced).toEqual([{ ledger: s.pauses.windows, nowMs: T0 }]);
    expect(s.ledger.missed).toEqual([
      { app: 'a', fromMs: T0 - 600_000, toMs: T0 - PAUSE_SETTLE_LAG_MS, limit: PAUSE_SETTLE_BATCH },
      { app: 'b', fromMs: T0 - 900_000, toMs: T0 - 300_000, limit: PAUSE_SETTLE_BATCH },
    ]);
    expect(result).toMatchObject({ pausedMissed: 6 });
    expect(await s.gauge('timer_paused_apps')).toBe(1);
    expect(await s.gauge('timer_paused_fires_missed_total')).toBe(6);
  });

  it('rescues overdue fires all the same when Redis or MySQL fail while it settles the pauses', async () => {
    const s = setup();
    s.pauses.windows = [{ app: 'a', pausedAt: T0 - 600_000, resumedAt: null }];
    s.pauses.failSync = true;
    s.ledger.failMissPaused = true;
    s.ledger.rows = [pending('1', T0 - 90_000)];
    expect(await s.service.pass()).toMatchObject({ rescued: { pending: 1 }, pausedMissed: 0 });
    expect(s.publisher.sent.map((t) => t.timerId)).toEqual(['1']);
  });

  it('does nothing while another replica runs a pass', async () => {
    const s = setup();
    s.ledger.rows = [pending('1', T0 - 90_000)];
    s.locks.held = true;
    expect(await s.service.pass()).toEqual({ ran: false });
    expect(s.publisher.sent).toEqual([]);
  });

  it('builds the message the claim rules take', () => {
    expect(rescueMessage(pending('9', 5)).attempt).toBe(1);
    expect(rescueMessage({ timerId: '9', runAt: 5, status: TaskStatus.Running, attempt: 2, claimedBy: 'x:1' }).attempt).toBe(2);
    expect(rescueMessage({ timerId: '9', runAt: 5, status: TaskStatus.Running, attempt: 2, claimedBy: null }).attempt).toBe(3);
    // A backfill's fire stays one when rescued (exempt from the catch-up policy, X-Timer-Backfill).
    expect(rescueMessage({ timerId: '9', runAt: 5, status: TaskStatus.Pending, attempt: 0, claimedBy: null, backfill: true })).toEqual({ timerId: '9', runAt: 5, fireId: '9-5', attempt: 1, backfill: true });
    expect(rescueMessage({ timerId: '9', runAt: 5, status: TaskStatus.Pending, attempt: 0, claimedBy: null, backfill: false })).not.toHaveProperty('backfill');
  });
});
