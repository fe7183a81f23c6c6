import { Logger } from '@nestjs/common';
import { Registry, Counter } from 'prom-client';
import type { CallbackClient, CallbackResult } from '@timer/callback';
import type { FireClaimRepository, FireOutcomeRepository, TaskRepository, TimerDefinitionRepository } from '@timer/dal';
import { TaskStatus, TimerStatus } from '@timer/dal';
import type { MetricsService } from '@timer/platform';
import type { CallMarks, InFlightFires, MaintenanceWindows, PausedApps, PauseState } from '@timer/redis';
import { FireWriter } from '@timer/fire';
import type { MaintenanceWindow } from '@timer/schedule';
import { FakeCallback, FakeCallMarks, FakeClock, FakeFires, FakeInFlightFires, FakeLiveness, FakePublisher, timerDef } from '../../test/fakes';
import { ExecutorConfig } from '../config/executor.env';
import { AppShareGate } from '../delivery-control/app-share.gate';
import { DeliveryControlMetrics } from '../delivery-control/delivery-control.metrics';
import { DeliveryControl } from '../delivery-control/delivery-control.service';
import { AttemptOutcomes } from './attempt-outcomes.service';
import { CallStarts } from './call-starts.service';
import { ClaimBatcher } from './claim-batcher.service';
import { ExecutorMetrics } from './executor.metrics';
import { type ExecutorLiveness, LIVENESS_TTL_MS } from './executor-liveness.service';
import { FireAdmission, RECHECK_MARGIN_MS } from './fire-admission.service';
import { FireClaimer } from './fire-claimer.service';
import { EARLY_CALL_MARK_MS, FireDelivery } from './fire-delivery.service';
import type { FirePublisher } from './fire-publisher';
import { FireLane } from './fire-lanes';
import { FireService } from './fire.service';
import { QUIET_FROM_MS } from './instant-waits';
import { ROOMY_SLOT_LEAD_MS } from './slot-leads';
import { jitterOf } from './jitter';
import { LIGHT_FIRST_MAX_MS } from './light-first';
import { OutcomeRecorder } from './outcome-recorder.service';
import { OverlapGuard } from './overlap-guard.service';
import { MaintenanceGate } from './maintenance-gate.service';
import { MaintenanceWatch } from './maintenance-watch.service';
import { PauseWatch } from './pause-watch.service';
import { SettledFires } from './settled-fires.service';
import { MISS_BATCH, TimerCache } from './timer-cache.service';

const T0 = Date.UTC(2030, 0, 1, 12);
const LEASE = 60_000;

async function value(counter: Counter<string>, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await counter.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return hit?.value ?? 0;
}

function setup(env: NodeJS.ProcessEnv = {}) {
  const clock = new FakeClock(T0);
  const fires = new FakeFires();
  const callback = new FakeCallback();
  const publisher = new FakePublisher();
  const config = ExecutorConfig.load({ TIMER_EXECUTOR_FLUSH_MS: '0', ...env });
  const metrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
  // FakeFires stands in for the three fire repositories and TaskRepository (one tasks table).
  const claims = fires as unknown as FireClaimRepository;
  const cache = new TimerCache(fires as unknown as TimerDefinitionRepository, config, metrics, clock);
  const recorder = new OutcomeRecorder(fires as unknown as FireOutcomeRepository, config, metrics, clock);
  const pub = publisher as unknown as FirePublisher;
  const settled = new SettledFires(claims);
  const liveness = new FakeLiveness();
  const marks = new FakeCallMarks();
  const calls = new CallStarts(marks as unknown as CallMarks, liveness as unknown as ExecutorLiveness, config, metrics);
  const claimer = new FireClaimer(new ClaimBatcher(claims, metrics, clock), claims, fires as unknown as TaskRepository, cache, liveness as unknown as ExecutorLiveness, clock, config, calls);
  const outcomes = new AttemptOutcomes(recorder, pub, config, metrics, clock);
  const inFlight = new FakeInFlightFires();
  const pausedApps = { state: new Map<string, PauseState>(), fail: false };
  const reader = { read: async () => (pausedApps.fail ? Promise.reject(new Error('redis down')) : new Map(pausedApps.state)) } as unknown as PausedApps;
  const pauses = new PauseWatch(reader, { registry: new Registry() } as MetricsService, clock);
  const windows = new Map<string, MaintenanceWindow[]>();
  const maintenance = new MaintenanceWatch({ read: async () => new Map(windows) } as unknown as MaintenanceWindows, clock);
  const indexed: { timerId: string; runAt: number }[] = [];
  const taskMessages: { timerId: string; runAt: number }[] = [];
  const writer = new FireWriter(fires as unknown as TaskRepository, { add: async (f: typeof indexed) => void indexed.push(...f) }, { publish: async (t) => void taskMessages.push(t), publishBatch: async (ts) => void taskMessages.push(...ts) }, clock);
  const controlMetrics = new DeliveryControlMetrics({ registry: new Registry() } as MetricsService);
  const control = new DeliveryControl(config, controlMetrics, clock);
  const service = new FireService(
    new FireAdmission(claimer, pub, config, metrics, clock, pauses, cache, calls),
    new FireDelivery(cache, callback as unknown as CallbackClient, outcomes, config, metrics, clock, new OverlapGuard(inFlight as unknown as InFlightFires, claims, config, clock), control, new MaintenanceGate(maintenance, writer, outcomes), calls),
    metrics,
    new AppShareGate(control, cache, pub, config, controlMetrics, clock, settled, pauses),
    config,
    clock,
  );
  fires.defs.set('7', timerDef('7'));
  const msg = (runAt: number, attempt = 1) => ({ timerId: '7', runAt, fireId: `7-${runAt}`, attempt });
  return { clock, fires, callback, publisher, metrics, service, cache, msg, liveness, marks, pausedApps, pauses, inFlight, windows, maintenance, indexed, taskMessages, controlMetrics, control };
}

describe('FireService', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  describe('claim outcomes', () => {
    it('delivers a pending fire once and records it succeeded with its lateness', async () => {
      const s = setup();
      s.fires.addRow('7', T0 - 30);
      expect(await s.service.handle(s.msg(T0 - 30))).toBe('succeeded');
      expect(s.callback.calls).toHaveLength(1);
      expect(s.callback.calls[0].fire).toEqual({ timerId: '7', runAt: T0 - 30, jitteredAt: T0 - 30, attempt: 1 });
      expect(s.callback.calls[0].req).toMatchObject({ url: 'http://127.0.0.1:1/hook', method: 'POST', body: '{"x":1}' });
      const row = s.fires.row('7', T0 - 30)!;
      expect(row).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1, httpStatus: 200, latenessMs: 30, output: 'ok', claimedUntil: null });
      expect(row.claimedBy).toMatch(/:\d+$/);
      expect(await value(s.metrics.deliveries, { outcome: 'succeeded' })).toBe(1);
    });

    it("calls with the timer's own timeout (capped at TIMER_CALLBACK_TIMEOUT_MAX_MS), else the global one, and records when each attempt started", async () => {
      const s = setup({ TIMER_CALLBACK_TIMEOUT_MAX_MS: '20000' });
      const recorded = jest.spyOn(s.fires, 'recordOutcomes');
      const param = { url: 'http://127.0.0.1:1/hook', method: 'POST' };
      s.fires.defs.set('7', timerDef('7', { notifyHttpParam: { ...param, timeoutMs: 1_000 } }));
      s.fires.defs.set('8', timerDef('8', { notifyHttpParam: { ...param, timeoutMs: 90_000 } }));
      s.fires.defs.set('9', timerDef('9', { notifyHttpParam: param }));
      for (const id of ['7', '8', '9']) {
        s.fires.addRow(id, T0 - 30);
        await s.service.handle({ timerId: id, runAt: T0 - 30, fireId: `${id}-${T0 - 30}`, attempt: 1 });
      }
      expect(s.callback.calls.map((c) => c.req.timeoutMs)).toEqual([1_000, 20_000, undefined]);
      expect(recorded.mock.calls.flat(2).map((o) => o.startedAt)).toEqual([T0, T0, T0]);
    });

    it('records a fire missed without an attempt (no startedAt)', async () => {
      const s = setup();
      const recorded = jest.spyOn(s.fires, 'recordOutcomes');
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
      expect(recorded.mock.calls.flat(2).map((o) => o.startedAt ?? null)).toEqual([null]);
    });

    it('passes the app signing secret to the callback', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', {}, 'sekrit'));
      s.fires.addRow('7', T0);
      await s.service.handle(s.msg(T0));
      expect(s.callback.calls[0].secret).toBe('sekrit');
    });

    it('acks a second message of a settled fire as a duplicate without calling: the claim refuses it', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      await s.service.handle(s.msg(T0));
      expect(await s.service.handle(s.msg(T0))).toBe('duplicate');
      expect(s.callback.calls).toHaveLength(1);
      expect(await value(s.metrics.duplicates, { reason: 'settled' })).toBe(1);
    });

    it('reads no fire state on the way to a first claim (the claim is the fence)', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      await s.service.handle(s.msg(T0));
      expect(s.fires.stateReads).toBe(0);
    });

    it('does not deliver a fire a live executor holds, counts it and rechecks it within the liveness TTL', async () => {
      const s = setup();
      s.fires.addRow('7', T0, { status: TaskStatus.Running, attempt: 1, claimedBy: 'exec-b:1', claimedUntil: T0 + 40_000 });
      expect(await s.service.handle(s.msg(T0))).toBe('deferred-held');
      expect(s.callback.calls).toHaveLength(0);
      expect(s.publisher.deferred).toEqual([{ message: s.msg(T0), at: T0 + LIVENESS_TTL_MS + RECHECK_MARGIN_MS, recheck: true }]);
      expect(s.fires.row('7', T0)).toMatchObject({ claimedBy: 'exec-b:1', claimedUntil: T0 + 40_000 });
      expect(await value(s.metrics.duplicates, { reason: 'in_flight' })).toBe(1);
      // The recheck finds it settled: acked, not counted twice.
      s.fires.row('7', T0)!.status = TaskStatus.Succeeded;
      s.clock.current = T0 + 41_000;
      expect(await s.service.handle(s.msg(T0), { 'x-timer-recheck': '1' })).toBe('duplicate');
      expect(await value(s.metrics.duplicates, { reason: 'in_flight' })).toBe(1);
      expect(await value(s.metrics.duplicates, { reason: 'settled' })).toBe(0);
    });

    it('takes over a fire held by a dead executor before its lease ends, and flags the delivery as a redelivery', async () => {
      const s = setup();
      s.fires.addRow('7', T0, { status: TaskStatus.Running, attempt: 1, claimedBy: 'exec-b:9', claimedUntil: T0 + 50_000 });
      s.liveness.dead.add('exec-b');
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.callback.calls).toHaveLength(1);
      expect(s.callback.calls[0].fire).toEqual({ timerId: '7', runAt: T0, jitteredAt: T0, attempt: 1, redelivery: true });
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1 });
      expect(s.fires.row('7', T0)!.claimedBy).toMatch(/^exec-a:/);
      expect(await value(s.metrics.redeliveries, { reason: 'holder_died' })).toBe(1);
    });

    it('delivers a fire taken over from a dead executor that had not started its call as a first delivery: not flagged, not counted', async () => {
      const s = setup();
      await s.marks.open('exec-b', 0);
      await s.marks.markMany('exec-b', 0, [8]); // another claim of exec-b called; claim 9 waited for its run_at
      s.fires.addRow('7', T0, { status: TaskStatus.Running, attempt: 1, claimedBy: 'exec-b:9', claimedUntil: T0 + 50_000 });
      s.liveness.dead.add('exec-b');
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.callback.calls[0].fire).toEqual({ timerId: '7', runAt: T0, jitteredAt: T0, attempt: 1 });
      expect(await value(s.metrics.redeliveries, { reason: 'holder_died' })).toBe(0);
      expect(await value(s.metrics.takeovers, { call: 'not_called' })).toBe(1);
      // Were exec-b only paused, it can no longer start the call it lost.
      await expect(s.marks.markMany('exec-b', 0, [9])).resolves.toEqual([false]);
    });

    it('flags a fire taken over from a dead executor whose call had started', async () => {
      const s = setup();
      await s.marks.open('exec-b', 0);
      await s.marks.markMany('exec-b', 0, [9]);
      s.fires.addRow('7', T0, { status: TaskStatus.Running, attempt: 1, claimedBy: 'exec-b:9', claimedUntil: T0 + 50_000 });
      s.liveness.dead.add('exec-b');
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.callback.calls[0].fire).toMatchObject({ redelivery: true });
      expect(await value(s.metrics.redeliveries, { reason: 'holder_died' })).toBe(1);
      expect(await value(s.metrics.takeovers, { call: 'called' })).toBe(1);
    });

    it('does not call a fire whose claim was taken over before its call (this process was taken for dead)', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      await s.marks.takeOver('exec-a', 0, 0); // the first claim token of this process: exec-a:0
      expect(await s.service.handle(s.msg(T0))).toBe('fenced');
      expect(s.callback.calls).toHaveLength(0);
    });

    it('flags a recheck that claims after the holder\'s lease ran out as a redelivery', async () => {
      const s = setup();
      s.fires.addRow('7', T0, { status: TaskStatus.Running, attempt: 1, claimedBy: 'exec-b:3', claimedUntil: T0 - 1 });
      expect(await s.service.handle(s.msg(T0), { 'x-timer-recheck': '1' })).toBe('succeeded');
      expect(s.callback.calls[0].fire).toEqual({ timerId: '7', runAt: T0, jitteredAt: T0, attempt: 1, redelivery: true });
      expect(await value(s.metrics.redeliveries, { reason: 'lease_expired' })).toBe(1);
    });

    it('takes over a fire whose holder died mid-callback (claim expired) and delivers it once more', async () => {
      const s = setup();
      s.fires.addRow('7', T0 - 70_000, { status: TaskStatus.Running, attempt: 1, claimedBy: 'dead', claimedUntil: T0 - 10_000 });
      expect(await s.service.handle(s.msg(T0 - 70_000))).toBe('succeeded');
      expect(s.callback.calls).toHaveLength(1);
      expect(s.fires.row('7', T0 - 70_000)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1 });
    });

    it('delivers a replayed dead letter as a first attempt, however late, and only once', async () => {
      const s = setup();
      const old = T0 - 7_200_000; // beyond the 1 h misfire window: a replay is late on purpose
      s.fires.addRow('7', old, { status: TaskStatus.Failed, attempt: 3, error: 'HTTP 500' });
      const replay = { 'replayed-from': 'persistent://t/n/timer-tasks-dlq' };
      expect(await s.service.handle(s.msg(old, 3), replay)).toBe('succeeded');
      expect(s.callback.calls.map((c) => c.fire)).toEqual([{ timerId: '7', runAt: old, jitteredAt: old, attempt: 1 }]);
      expect(s.fires.row('7', old)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1 });
      // Replaying the same dead letter again finds the fire settled.
      expect(await s.service.handle(s.msg(old, 3), replay)).toBe('duplicate');
      expect(s.callback.calls).toHaveLength(1);
    });

    it('acks a stale attempt (the fire moved on) as a duplicate', async () => {
      const s = setup();
      s.fires.addRow('7', T0, { status: TaskStatus.Running, attempt: 3, claimedBy: 'x', claimedUntil: T0 + 1_000 });
      expect(await s.service.handle(s.msg(T0, 2))).toBe('duplicate');
      expect(await value(s.metrics.duplicates, { reason: 'stale' })).toBe(1);
      expect(s.publisher.deferred).toHaveLength(0);
    });

    it('re-creates a missing row (INSERT IGNORE) and then claims it', async () => {
      const s = setup();
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Succeeded, app: 'app' });
    });

    it('counts a fire of a timer that does not exist at all as missed (no row to record it in)', async () => {
      const s = setup();
      expect(await s.service.handle({ timerId: '99', runAt: T0, fireId: 'x', attempt: 1 })).toBe('missed');
      expect(await value(s.metrics.missed, { reason: 'timer_not_found' })).toBe(1);
    });

    it('drops what is not a TaskMessage, counted', async () => {
      const s = setup();
      expect(await s.service.handle({ timerId: 'abc', runAt: 1 })).toBe('invalid');
      expect(await s.service.handle('junk')).toBe('invalid');
      expect(await value(s.metrics.invalid)).toBe(2);
    });
  });

  describe('missed and misfire', () => {
    it('records a disabled timer missed without calling', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
      expect(s.callback.calls).toHaveLength(0);
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Missed, error: 'timer disabled' });
      expect(await value(s.metrics.missed, { reason: 'timer_disabled' })).toBe(1);
    });

    it('records a deleted timer missed without calling', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { deletedAt: T0 - 5, status: TimerStatus.Disabled }));
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Missed, error: 'timer deleted' });
      // The owner's own act: no failure notification.
      expect(s.publisher.missedNotices).toHaveLength(0);
    });

    it('fire_late: delivers within the window, records a fire 2 h late missed with the lateness', async () => {
      const s = setup();
      s.fires.addRow('7', T0 - 3_599_000);
      expect(await s.service.handle(s.msg(T0 - 3_599_000))).toBe('succeeded');
      s.fires.addRow('7', T0 - 7_200_000);
      expect(await s.service.handle(s.msg(T0 - 7_200_000))).toBe('missed');
      expect(s.fires.row('7', T0 - 7_200_000)).toMatchObject({ status: TaskStatus.Missed, error: 'late by 7200000 ms', latenessMs: 7_200_000 });
      expect(s.callback.calls).toHaveLength(1);
      // Late is not what the owner asked for: published for the failure notifier, with the record's reason.
      expect(s.publisher.missedNotices).toEqual([{ message: s.msg(T0 - 7_200_000), reason: 'late by 7200000 ms' }]);
    });

    it('skip: records a fire more than 5 s late missed', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { misfirePolicy: 'skip' }));
      s.fires.addRow('7', T0 - 4_000);
      s.fires.addRow('7', T0 - 6_000);
      expect(await s.service.handle(s.msg(T0 - 4_000))).toBe('succeeded');
      expect(await s.service.handle(s.msg(T0 - 6_000))).toBe('missed');
      expect(await value(s.metrics.missed, { reason: 'late' })).toBe(1);
    });

    it('does not apply the misfire policy to retries (they are late by their backoff)', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { misfirePolicy: 'skip' }));
      s.fires.addRow('7', T0 - 60_000, { status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: T0 + LEASE });
      expect(await s.service.handle(s.msg(T0 - 60_000, 2))).toBe('succeeded');
    });

    it('delivers a backfill fire however late, flagged for X-Timer-Backfill; its retry keeps the flag', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { misfirePolicy: 'skip' }));
      s.fires.addRow('7', T0 - 7_200_000);
      expect(await s.service.handle({ ...s.msg(T0 - 7_200_000), backfill: true })).toBe('succeeded');
      expect(s.callback.calls.map((c) => c.fire.backfill)).toEqual([true]);
      s.fires.addRow('7', T0 - 60_000, { status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: T0 + LEASE });
      expect(await s.service.handle({ ...s.msg(T0 - 60_000, 2), backfill: true })).toBe('succeeded');
      s.fires.addRow('7', T0 - 6_000);
      expect(await s.service.handle(s.msg(T0 - 6_000))).toBe('missed');
      expect(s.callback.calls.map((c) => c.fire.backfill ?? false)).toEqual([true, true]);
    });
  });

  describe('early messages', () => {
    it('waits until run_at when at most TIMER_EXECUTOR_MAX_EARLY_WAIT_MS early', async () => {
      const s = setup();
      s.fires.addRow('7', T0 + 3_000);
      expect(await s.service.handle(s.msg(T0 + 3_000))).toBe('succeeded');
      expect(s.clock.sleeps).toEqual([3_000]);
      expect(s.fires.row('7', T0 + 3_000)!.latenessMs).toBe(0);
    });

    it('calls the callback it was claimed with when an edit lands while it waits; a disable meanwhile still stops it', async () => {
      const s = setup();
      s.fires.addRow('7', T0 + 3_000);
      const sleep = s.clock.sleep.bind(s.clock);
      // The edit commits while the claimed attempt waits for run_at (longer than the cache TTL).
      s.clock.sleep = async (ms: number) => {
        s.fires.defs.set('7', timerDef('7', { version: 3, notifyHttpParam: { url: 'http://127.0.0.1:1/edited', method: 'PUT' } }));
        await sleep(ms);
      };
      expect(await s.service.handle(s.msg(T0 + 3_000))).toBe('succeeded');
      expect(s.callback.calls[0].req).toMatchObject({ url: 'http://127.0.0.1:1/hook', method: 'POST' });
      // The next fire is claimed under the new definition.
      s.clock.sleep = sleep;
      s.fires.addRow('7', s.clock.now());
      await s.service.handle(s.msg(s.clock.now()));
      expect(s.callback.calls[1].req).toMatchObject({ url: 'http://127.0.0.1:1/edited', method: 'PUT' });

      s.fires.addRow('7', s.clock.now() + 3_000);
      s.clock.sleep = async (ms: number) => {
        s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled, version: 4 }));
        await sleep(ms);
      };
      expect(await s.service.handle(s.msg(s.clock.now() + 3_000))).toBe('missed');
      expect(s.callback.calls).toHaveLength(2);
    });

    it('re-publishes a message further ahead for just before run_at, without claiming', async () => {
      const s = setup();
      s.fires.addRow('7', T0 + 60_000);
      expect(await s.service.handle(s.msg(T0 + 60_000))).toBe('deferred-early');
      expect(s.publisher.deferred).toEqual([{ message: s.msg(T0 + 60_000), at: T0 + 59_000, recheck: false }]);
      expect(s.fires.claims).toBe(0);
      expect(s.callback.calls).toHaveLength(0);
    });
  });

  describe('maintenance windows', () => {
    const fixed = (policy: 'skip' | 'defer', over: Partial<MaintenanceWindow> = {}): MaintenanceWindow =>
      ({ id: '1', app: 'app', timerIds: null, fromMs: T0 - 1_000, toMs: T0 + 4_000, cron: null, durationMs: null, policy, ...over });
    async function inWindow(w: MaintenanceWindow) {
      const s = setup();
      s.windows.set('app', [w]);
      await s.maintenance.refresh();
      return s;
    }

    it('skip: a fire inside the window is recorded missed without a callback; fires at its end and of other timers are delivered', async () => {
      const s = await inWindow(fixed('skip', { timerIds: ['7'] }));
      s.fires.defs.set('8', timerDef('8'));
      for (const [id, t] of [['7', T0], ['7', T0 + 4_000], ['8', T0]] as const) s.fires.addRow(id, t);
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Missed, error: 'skipped: maintenance' });
      expect(await value(s.metrics.missed, { reason: 'maintenance' })).toBe(1);
      expect(await s.service.handle({ timerId: '8', runAt: T0, fireId: `8-${T0}`, attempt: 1 })).toBe('succeeded');
      s.clock.current = T0 + 4_000;
      expect(await s.service.handle(s.msg(T0 + 4_000))).toBe('succeeded');
      expect(s.callback.calls.map((c) => [c.fire.timerId, c.fire.runAt])).toEqual([['8', T0], ['7', T0 + 4_000]]);
    });

    it('defer: fires inside the window leave one pending fire at its end, published when near', async () => {
      const s = await inWindow(fixed('defer'));
      s.fires.addRow('7', T0);
      s.fires.addRow('7', T0 + 1_000);
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
      s.clock.current = T0 + 1_000;
      expect(await s.service.handle(s.msg(T0 + 1_000))).toBe('missed');
      expect(s.fires.row('7', T0 + 1_000)).toMatchObject({ status: TaskStatus.Missed, error: `deferred: maintenance, to ${T0 + 4_000}` });
      expect(s.fires.row('7', T0 + 4_000)).toMatchObject({ status: TaskStatus.Pending });
      expect([...s.fires.rows.values()].filter((r) => r.runAt === T0 + 4_000)).toHaveLength(1);
      expect([...s.indexed, ...s.taskMessages].every((f) => f.runAt === T0 + 4_000)).toBe(true);
      expect(s.callback.calls).toHaveLength(0);
    });

    it('a recurring window covers each occurrence of its cron for durationMs', async () => {
      // every minute at :00 for 10 s
      const s = await inWindow(fixed('skip', { fromMs: null, toMs: null, cron: '0 * * * * *', durationMs: 10_000 }));
      const minute = Math.ceil(T0 / 60_000) * 60_000;
      for (const t of [minute + 9_999, minute + 10_000]) s.fires.addRow('7', t);
      s.clock.current = minute + 10_000;
      expect(await s.service.handle(s.msg(minute + 9_999))).toBe('missed');
      expect(await s.service.handle(s.msg(minute + 10_000))).toBe('succeeded');
    });

    it('run now and backfill fires are exempt', async () => {
      const s = await inWindow(fixed('skip'));
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0), { 'x-timer-run-now': '1' })).toBe('succeeded');
      s.fires.addRow('7', T0 + 500);
      expect(await s.service.handle({ ...s.msg(T0 + 500), backfill: true })).toBe('succeeded');
    });
  });

  describe('paused app', () => {
    async function paused(pausedAt: number, resumedAt: number | null = null) {
      const s = setup();
      s.pausedApps.state.set('app', { pausedAt, resumedAt });
      await s.pauses.refresh();
      return s;
    }

    it('acks a first attempt at or after the pause without a callback or a write; earlier fires and other apps are delivered', async () => {
      const s = await paused(T0);
      s.fires.defs.set('8', timerDef('8', { app: 'other' }));
      for (const [id, t] of [['7', T0], ['7', T0 - 1], ['8', T0]] as const) s.fires.addRow(id, t);
      expect(await s.service.handle(s.msg(T0))).toBe('paused');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Pending, attempt: 0 });
      expect(s.fires.claims).toBe(0);
      expect(await value(s.pauses.skipped)).toBe(1);
      expect(await s.service.handle(s.msg(T0 - 1))).toBe('succeeded');
      expect(await s.service.handle({ timerId: '8', runAt: T0, fireId: `8-${T0}`, attempt: 1 })).toBe('succeeded');
      expect(s.callback.calls.map((c) => c.fire.runAt)).toEqual([T0 - 1, T0]);
    });

    it('delivers run-now messages, retries and rechecks of a paused app (asked for, or already claimed)', async () => {
      const s = await paused(T0 - 10_000);
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0), { 'x-timer-run-now': '1' })).toBe('succeeded');
      s.fires.addRow('7', T0 - 5_000);
      const row = s.fires.row('7', T0 - 5_000)!;
      Object.assign(row, { status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: T0 + 60_000 });
      expect(await s.service.handle(s.msg(T0 - 5_000, 2))).toBe('succeeded');
    });

    it('delivers from the resume instant on; a fire inside the ended pause is still not delivered', async () => {
      const s = await paused(T0 - 60_000, T0);
      s.fires.addRow('7', T0 - 1);
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0 - 1))).toBe('paused');
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
    });

    it('hands a fire further ahead than a resume could reach back to the broker for just before its time', async () => {
      const s = await paused(T0 - 1_000);
      s.fires.addRow('7', T0 + 4_000);
      expect(await s.service.handle(s.msg(T0 + 4_000))).toBe('deferred-early');
      expect(s.publisher.deferred).toEqual([{ message: s.msg(T0 + 4_000), at: T0 + 3_000, recheck: false }]);
      s.clock.current = T0 + 3_000;
      expect(await s.service.handle(s.msg(T0 + 4_000))).toBe('paused');
      expect(s.fires.claims).toBe(0);
    });

    it('keeps the last known pauses while Redis cannot be read', async () => {
      const s = await paused(T0);
      s.pausedApps.fail = true;
      s.pausedApps.state.clear();
      await s.pauses.refresh();
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('paused');
      s.pausedApps.fail = false;
      await s.pauses.refresh();
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
    });
  });

  describe('failures', () => {
    const fail500 = { ok: false, status: 500, costMs: 2, error: 'HTTP 500', output: 'boom', retryable: true };

    it('schedules the next attempt with backoff and keeps the row running, waiting for it', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      s.callback.results = [fail500];
      expect(await s.service.handle(s.msg(T0))).toBe('retry');
      expect(s.publisher.retries).toHaveLength(1);
      const { message, at } = s.publisher.retries[0];
      expect(message).toEqual(s.msg(T0, 2));
      expect(at).toBeGreaterThanOrEqual(T0 + 800);
      expect(at).toBeLessThanOrEqual(T0 + 1_200);
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: at + LEASE, httpStatus: 500, error: 'HTTP 500' });
      // A duplicate of attempt 1 cannot take it meanwhile; attempt 2 can.
      expect(await s.service.handle(s.msg(T0))).toBe('deferred-held');
      s.clock.current = at;
      s.callback.results = [fail500];
      expect(await s.service.handle(s.msg(T0, 2))).toBe('retry');
      const second = s.publisher.retries[1].at - at;
      expect(second).toBeGreaterThanOrEqual(1_600);
      expect(second).toBeLessThanOrEqual(2_400);
    });

    it('dead-letters and records failed after the last attempt', async () => {
      const s = setup();
      s.fires.addRow('7', T0, { status: TaskStatus.Running, attempt: 2, claimedBy: null, claimedUntil: T0 + LEASE });
      s.callback.results = [fail500];
      expect(await s.service.handle(s.msg(T0, 3))).toBe('failed');
      expect(s.publisher.retries).toHaveLength(0);
      expect(s.publisher.deadLetters).toHaveLength(1);
      expect(s.publisher.deadLetters[0].message).toEqual(s.msg(T0, 3));
      expect(s.publisher.deadLetters[0].properties).toMatchObject({ 'x-timer-error': 'HTTP 500', 'x-timer-attempts': '3', 'x-timer-http-status': '500' });
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Failed, attempt: 3 });
      expect(await value(s.metrics.deadLettered)).toBe(1);
    });

    it('does not retry a non-retryable failure (4xx, refused private address)', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      s.callback.results = [{ ok: false, costMs: 0, error: 'refusing private address 127.0.0.1', retryable: false }];
      expect(await s.service.handle(s.msg(T0))).toBe('failed');
      expect(s.publisher.retries).toHaveLength(0);
      expect(s.publisher.deadLetters[0].properties['x-timer-reason']).toBe('not retryable');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Failed, attempt: 1 });
    });

    it('drops its outcome when the claim passed to another executor (fenced)', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      const steal = s.fires.recordOutcomes.bind(s.fires);
      s.fires.recordOutcomes = async (os) => {
        s.fires.row('7', T0)!.claimedBy = 'thief';
        return steal(os);
      };
      expect(await s.service.handle(s.msg(T0))).toBe('fenced');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Running, claimedBy: 'thief' });
      expect(await value(s.metrics.fenced)).toBe(1);
    });
  });

  describe('definition cache', () => {
    it('uses a cached definition within the TTL and reloads it after', async () => {
      const s = setup();
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.clock.current += 1_999;
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.clock.current += 1;
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Disabled);
    });

    it('keeps a definition past the TTL while change polls see no change, and drops it at the poll after a change', async () => {
      const s = setup();
      await s.cache.pollChanges(); // sets the watermark
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.clock.current += 10_000;
      await s.cache.pollChanges(); // nothing touched: the entry stays current
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.fires.touch('7');
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Disabled);
    });

    it('drops the definitions of an app whose signing secret changed', async () => {
      const s = setup();
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.signingSecret).toBeNull();
      s.fires.defs.set('7', timerDef('7', {}, 'new-secret'));
      s.fires.touch('app:other');
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.signingSecret).toBeNull();
      s.fires.touch('app:app');
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.signingSecret).toBe('new-secret');
    });

    it('falls back to the TTL when change polls fail or stop', async () => {
      const s = setup();
      await s.cache.pollChanges();
      await s.cache.pollChanges();
      await s.cache.get('7');
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.fires.failChanges = true;
      s.clock.current += 1_999;
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.clock.current += 1; // the last good poll is now a TTL old
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Disabled);
    });

    it('does not put back a definition whose load began before a poll that dropped it', async () => {
      const s = setup();
      await s.cache.pollChanges();
      let release: () => void = () => undefined;
      const orig = s.fires.definitions.bind(s.fires);
      let began: () => void = () => undefined;
      const reading = new Promise<void>((r) => (began = r));
      s.fires.definitions = async (ids) => {
        const defs = await orig(ids); // read before the change
        began();
        await new Promise<void>((r) => (release = r));
        return defs;
      };
      const loading = s.cache.get('7');
      await reading;
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.fires.touch('7');
      s.clock.current += 1;
      await s.cache.pollChanges();
      release();
      expect((await loading)?.timer.status).toBe(TimerStatus.Enabled); // that caller got what it read
      s.fires.definitions = orig;
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Disabled); // but it was not cached
    });

    it('shares one load among concurrent misses', async () => {
      const s = setup();
      await Promise.all([s.cache.get('7'), s.cache.get('7'), s.cache.get('7')]);
      expect(s.fires.definitionQueries).toBe(1);
    });

    it('loads the misses of one turn in one query, at most MISS_BATCH ids each, an absent timer as null', async () => {
      const s = setup();
      const ids = Array.from({ length: MISS_BATCH + 10 }, (_, i) => String(100 + i));
      for (const id of ids) s.fires.defs.set(id, timerDef(id));
      const got = await Promise.all([...ids, '99999'].map((id) => s.cache.get(id)));
      expect(got.slice(0, -1).map((d) => d?.timer.id)).toEqual(ids);
      expect(got[got.length - 1]).toBeNull();
      expect(s.fires.definitionQueries).toBe(2);
      // Cached: no further query for a found one; an absent one is read again (it may be a row not committed yet).
      expect((await s.cache.get('100'))?.timer.id).toBe('100');
      expect(s.fires.definitionQueries).toBe(2);
      expect(await s.cache.get('99999')).toBeNull();
      expect(s.fires.definitionQueries).toBe(3);
      s.fires.defs.set('99999', timerDef('99999'));
      expect(s.cache.peek('99999')).toBeUndefined();
      expect((await s.cache.get('99999'))?.timer.id).toBe('99999');
    });

    it('fails every waiter of a failed miss query, and the next miss queries again', async () => {
      const s = setup();
      const orig = s.fires.definitions.bind(s.fires);
      s.fires.definitions = async () => {
        throw new Error('connection lost');
      };
      const results = await Promise.allSettled([s.cache.get('7'), s.cache.get('8')]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      s.fires.definitions = orig;
      expect((await s.cache.get('7'))?.timer.id).toBe('7');
    });

    it('prefetches the timers with pending fires due within step2', async () => {
      const s = setup();
      s.fires.defs.set('8', timerDef('8'));
      s.fires.defs.set('9', timerDef('9'));
      s.fires.addRow('8', T0 + 30_000);
      s.fires.addRow('9', T0 + 90_000);
      expect(await s.cache.prefetch()).toBe(1);
      const before = s.fires.definitionQueries;
      expect((await s.cache.get('8'))?.timer.id).toBe('8');
      expect(s.fires.definitionQueries).toBe(before);
    });
  });
});

describe('FireService fire policies', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));
  const prev = T0 - 1_000;
  /** A timer under `overlapPolicy` whose fire `prev` is in flight (held by another executor), and a pending fire at T0. */
  function behindInFlight(overlapPolicy: string) {
    const s = setup();
    s.fires.defs.set('7', timerDef('7', { overlapPolicy }));
    s.fires.addRow('7', prev, { status: TaskStatus.Running, attempt: 1, claimedBy: 'exec-b:1', claimedUntil: T0 + 60_000 });
    s.inFlight.inFlight.set('7', `7-${prev}`);
    s.fires.addRow('7', T0);
    return s;
  }

  describe('overlap', () => {
    it('skip: records a fire missed without a callback while the previous fire is in flight, and frees the marker when that one settles', async () => {
      const s = behindInFlight('skip');
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
      expect(s.callback.calls).toHaveLength(0);
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Missed, error: `skipped: overlap, fire 7-${prev} in flight` });
      expect(await value(s.metrics.missed, { reason: 'overlap' })).toBe(1);

      s.fires.row('7', prev)!.status = TaskStatus.Succeeded; // settled, but its executor died before the release
      s.fires.addRow('7', T0 + 1_000);
      s.clock.current += 1_000;
      expect(await s.service.handle(s.msg(T0 + 1_000))).toBe('succeeded');
      expect(s.inFlight.inFlight.has('7')).toBe(false);
    });

    it('buffer_one: one fire waits for its turn (its claim renewed), a further one is skipped', async () => {
      const s = behindInFlight('buffer_one');
      s.fires.addRow('7', T0 + 1);
      const sleep = s.clock.sleep.bind(s.clock);
      let polls = 0;
      s.clock.sleep = async (ms) => {
        await sleep(ms);
        if (++polls === 120) {
          expect(s.fires.row('7', T0)!.claimedUntil).toBeGreaterThan(T0 + LEASE); // renewed while it waits (24 s of polls)
          // While the first waits: a third fire finds the waiting place taken.
          expect(await s.service.handle(s.msg(T0 + 1))).toBe('missed');
          s.fires.row('7', prev)!.status = TaskStatus.Succeeded;
          await s.inFlight.release('7', `7-${prev}`);
        }
      };
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.callback.calls.map((c) => c.fire.runAt)).toEqual([T0]);
      expect(s.fires.row('7', T0 + 1)).toMatchObject({ status: TaskStatus.Missed, error: `skipped: overlap, fire 7-${prev} in flight` });
      expect(s.fires.row('7', T0)!.latenessMs).toBeGreaterThan(20_000); // it waited for its turn
      expect(s.inFlight.inFlight.has('7')).toBe(false);
    });

    it('keeps a retried fire in flight until its last attempt settles; run now is exempt', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { overlapPolicy: 'skip' }));
      s.fires.addRow('7', T0);
      s.callback.results.push({ ok: false, costMs: 1, error: 'HTTP 503', retryable: true, status: 503 });
      expect(await s.service.handle(s.msg(T0))).toBe('retry');
      expect(s.inFlight.inFlight.get('7')).toBe(`7-${T0}`);
      s.fires.addRow('7', T0 + 1);
      expect(await s.service.handle(s.msg(T0 + 1), { 'x-timer-run-now': '1' })).toBe('succeeded');
      s.clock.current += 5_000;
      expect(await s.service.handle(s.msg(T0, 2))).toBe('succeeded');
      expect(s.inFlight.inFlight.has('7')).toBe(false);
    });
  });

  describe('catch-up', () => {
    const every10s = (catchupPolicy: string, catchupWindowMs: number | null = null) =>
      timerDef('7', { cron: '*/10 * * * * *', catchupPolicy, catchupWindowMs });

    it('latest: a late fire is coalesced when the next one is due already; the most recent late one is delivered', async () => {
      const s = setup();
      s.fires.defs.set('7', every10s('latest'));
      s.clock.current = T0 + 25_000; // fires at T0, +10 s, +20 s are late
      for (const at of [T0, T0 + 10_000, T0 + 20_000]) s.fires.addRow('7', at);
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
      expect(await s.service.handle(s.msg(T0 + 10_000))).toBe('missed');
      expect(await s.service.handle(s.msg(T0 + 20_000))).toBe('succeeded');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Missed, error: 'coalesced' });
      expect(await value(s.metrics.missed, { reason: 'coalesced' })).toBe(2);
      expect(s.publisher.missedNotices).toHaveLength(0);
    });

    it('none: records late fires missed, delivers on-time ones; all: delivers within catchupWindowMs only', async () => {
      const s = setup();
      s.fires.defs.set('7', every10s('none'));
      s.clock.current = T0 + 6_000;
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
      expect(s.fires.row('7', T0)!.error).toBe('late by 6000 ms');
      s.fires.addRow('7', T0 + 3_000);
      expect(await s.service.handle(s.msg(T0 + 3_000))).toBe('succeeded');

      s.fires.defs.set('7', every10s('all', 20_000));
      await s.cache.get('7', true);
      s.clock.current = T0 + 40_000;
      s.fires.addRow('7', T0 + 10_000);
      s.fires.addRow('7', T0 + 30_000);
      expect(await s.service.handle(s.msg(T0 + 10_000))).toBe('missed');
      expect(await s.service.handle(s.msg(T0 + 30_000))).toBe('succeeded');
    });

    it('without catchupPolicy, catchupWindowMs replaces the global window of fire_late', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { catchupWindowMs: 2_000 }));
      s.clock.current = T0 + 2_500;
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('missed');
    });
  });

  describe('jitter', () => {
    it('waits for run_at plus the fire id\'s jitter, judges lateness from there, and sends both times', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { jitterMs: 4_000 }));
      const j = jitterOf(`7-${T0}`, 4_000);
      s.fires.addRow('7', T0);
      s.callback.results.push({ ok: false, costMs: 1, error: 'HTTP 503', retryable: true, status: 503 });
      expect(await s.service.handle(s.msg(T0))).toBe('retry');
      expect(s.clock.current).toBe(T0 + j);
      expect(s.fires.row('7', T0)!.latenessMs).toBe(0);
      s.clock.current += 10_000;
      expect(await s.service.handle(s.msg(T0, 2))).toBe('succeeded');
      expect(s.callback.calls.map((c) => c.fire.jitteredAt)).toEqual([T0 + j, T0 + j]);
    });

    it('hands a message back to the broker until just before its jittered time', async () => {
      const s = setup();
      s.fires.defs.set('7', timerDef('7', { jitterMs: 3_600_000 }));
      const runAt = [...Array(50).keys()].map((i) => T0 + i * 1000).find((t) => jitterOf(`7-${t}`, 3_600_000) > 60_000)!;
      s.fires.addRow('7', runAt);
      s.clock.current = runAt;
      expect(await s.service.handle(s.msg(runAt))).toBe('deferred-early');
      expect(s.publisher.deferred[0].at).toBe(runAt + jitterOf(`7-${runAt}`, 3_600_000) - 1_000);
      expect(s.fires.row('7', runAt)!.status).toBe(TaskStatus.Pending);
    });
  });

  describe('fair delivery', () => {
    /** Two apps active, a share of 2 each: 'app' (timer 7) holds both of its own, 'light' (timer 8) one; a fire of each at `runAt`. */
    const appFull = (runAt: number) => {
      const s = setup({ TIMER_EXECUTOR_CONCURRENCY: '4' });
      s.fires.defs.set('8', timerDef('8', { app: 'light' }));
      s.fires.addRow('7', runAt);
      s.fires.addRow('8', runAt);
      s.control.shares.tryHold('app', T0);
      s.control.shares.tryHold('app', T0);
      s.control.shares.tryHold('light', T0);
      return s;
    };
    /**
     * App 'app' (timer 7) holds 3 of its share of 3 with its own fire, 'light' (timer 8) 1 of 3; both fires
     * due at T0 + 500 wait for it on the one timer of that instant, and as it ends the heavy app's fire,
     * which waited first, resumes first. `holdLight`: the light call answers when the test says.
     */
    const heavyAndLight = async (holdLight: boolean) => {
      const s = setup({ TIMER_EXECUTOR_CONCURRENCY: '6' });
      s.fires.defs.set('8', timerDef('8', { app: 'light' }));
      s.fires.addRow('7', T0 + 500);
      s.fires.addRow('8', T0 + 500);
      s.control.shares.tryHold('app', T0);
      s.control.shares.tryHold('app', T0);
      let answer: () => void = () => undefined;
      const deliver = s.callback.deliver.bind(s.callback);
      s.callback.deliver = async (req, fire, secret) => {
        const result = await deliver(req, fire, secret);
        if (holdLight && fire.timerId === '8') await new Promise<void>((r) => (answer = r));
        return result;
      };
      const wakes: (() => void)[] = [];
      s.clock.sleep = () => new Promise<void>((r) => wakes.push(r));
      const heavy = s.service.handle(s.msg(T0 + 500));
      while (wakes.length < 1) await new Promise((r) => setImmediate(r));
      const light = s.service.handle({ timerId: '8', runAt: T0 + 500, fireId: `8-${T0 + 500}`, attempt: 1 });
      // Light claimed, then waiting for its time too.
      while (!s.fires.row('8', T0 + 500)?.claimedBy) await new Promise((r) => setImmediate(r));
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      expect(wakes).toHaveLength(1);
      s.clock.current = T0 + 500;
      wakes[0]();
      while (s.callback.calls.length < 1) await new Promise((r) => setImmediate(r));
      return { s, heavy, light, answer: () => answer() };
    };
    it("starts the fires due at one instant of an app holding more than half its share after the other apps' fires", async () => {
      const { s, heavy, light } = await heavyAndLight(false);
      expect(await Promise.all([heavy, light])).toEqual(['succeeded', 'succeeded']);
      expect(s.callback.calls.map((c) => c.fire.timerId)).toEqual(['8', '7']);
    });
    it("holds a heavy app's call due at an instant until the light apps' calls of that instant are answered", async () => {
      const { s, heavy, light, answer } = await heavyAndLight(true);
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      expect(s.callback.calls.map((c) => c.fire.timerId)).toEqual(['8']);
      answer();
      expect(await Promise.all([heavy, light])).toEqual(['succeeded', 'succeeded']);
      expect(s.callback.calls.map((c) => c.fire.timerId)).toEqual(['8', '7']);
    });
    it(`lets the heavy app's call go after ${LIGHT_FIRST_MAX_MS} ms when a light call is not answered by then`, async () => {
      const { s, heavy, light, answer } = await heavyAndLight(true);
      const from = Date.now();
      expect(await heavy).toBe('succeeded');
      expect(Date.now() - from).toBeGreaterThanOrEqual(LIGHT_FIRST_MAX_MS - 5);
      expect(s.callback.calls.map((c) => c.fire.timerId)).toEqual(['8', '7']);
      answer();
      expect(await light).toBe('succeeded');
    });
    it("gives its lane slot back before the broker stores its hand-back: another app's fire due at that instant takes the slot meanwhile", async () => {
      const s = appFull(T0);
      let stored!: () => void;
      const handBack = s.publisher.handBack.bind(s.publisher);
      s.publisher.handBack = (m, at, n) => handBack(m, at, n).then(() => new Promise<void>((r) => (stored = r)));
      const lane = new FireLane(1);
      const over = s.service.handleMessage(s.msg(T0), {}, lane);
      while (s.publisher.handedBack.length === 0) await new Promise((r) => setImmediate(r));
      expect(lane.inFlight).toBe(0);
      expect(await s.service.handleMessage({ timerId: '8', runAt: T0, fireId: `8-${T0}`, attempt: 1 }, {}, lane)).toEqual(['succeeded']);
      stored();
      expect(await over).toEqual(['deferred-share']);
      expect(s.callback.calls.map((c) => c.fire.timerId)).toEqual(['8']);
    });

    it('hands a fire of an app over its share back in the quiet part of the second, not at its instant; a fire under its share waits for its instant', async () => {
      const s = appFull(T0 + 800);
      // Definitions cached, as the prefetch has them (the check makes no look-up).
      await s.cache.get('7');
      await s.cache.get('8');
      const sleeps: number[] = [];
      const wakes: (() => void)[] = [];
      s.clock.sleep = (ms: number) => new Promise<void>((r) => (sleeps.push(ms), wakes.push(r)));
      const lane = new FireLane(4);
      const over = s.service.handleMessage(s.msg(T0 + 800), {}, lane);
      const under = s.service.handleMessage({ timerId: '8', runAt: T0 + 800, fireId: `8-${T0 + 800}`, attempt: 1 }, {}, lane);
      // T0 is a whole second: the hand-back waits for x.250, the light app's fire for its lane lead (roomy: the lane has a slot for it).
      expect(sleeps).toEqual([QUIET_FROM_MS, 800 - ROOMY_SLOT_LEAD_MS]);
      s.clock.current = T0 + QUIET_FROM_MS;
      wakes.shift()!();
      expect(await over).toEqual(['deferred-share']);
      expect(s.publisher.handedBack.map((h) => h.message.timerId)).toEqual(['7']);
      expect(s.callback.calls).toHaveLength(0);
      s.clock.current = T0 + 800;
      while (s.callback.calls.length === 0) {
        for (const w of wakes.splice(0)) w();
        await new Promise((r) => setImmediate(r));
      }
      expect(await under).toEqual(['succeeded']);
      expect(s.callback.calls.map((c) => c.fire.timerId)).toEqual(['8']);
    });

    it('marks a call during its short wait for run_at when its origin has a free slot; else once the call has its origin slot', async () => {
      const s = setup();
      const called = () => [...s.marks.chunks.values()].reduce((n, c) => n + c.called.size, 0);
      s.fires.defs.set('8', timerDef('8', { notifyHttpParam: { url: 'http://127.0.0.1:2/new', method: 'POST' } }));
      s.fires.addRow('7', T0 - 30);
      expect(await s.service.handle(s.msg(T0 - 30))).toBe('succeeded'); // origin :1 in use, idle now
      const sleep = s.clock.sleep.bind(s.clock);
      const markedBeforeTime: number[] = [];
      s.clock.sleep = async (ms: number) => {
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
        markedBeforeTime.push(called());
        await sleep(ms);
      };
      const fire = async (timerId: string, runAt: number) => {
        s.fires.addRow(timerId, runAt);
        return s.service.handle({ timerId, runAt, fireId: `${timerId}-${runAt}`, attempt: 1 });
      };
      expect(await fire('7', s.clock.now() + EARLY_CALL_MARK_MS)).toBe('succeeded'); // marked while it waits
      expect(await fire('8', s.clock.now() + 100)).toBe('succeeded'); // an origin not in use yet: after its gate
      expect(await fire('7', s.clock.now() + EARLY_CALL_MARK_MS + 1)).toBe('succeeded'); // a longer wait: after its gate
      expect(markedBeforeTime).toEqual([2, 2, 3]);
      expect(called()).toBe(4);
      expect(s.callback.calls).toHaveLength(4);
    });
  });

  describe('adaptive delivery', () => {
    it('retries a 503 not before its Retry-After, and records a fire due meanwhile as an attempt not sent (retry_after)', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      s.fires.addRow('7', T0 + 1_000);
      s.callback.results.push({ ok: false, status: 503, costMs: 2, error: 'HTTP 503', retryable: true, retryAfterMs: 10_000 });
      expect(await s.service.handle(s.msg(T0))).toBe('retry');
      expect(s.publisher.retries[0].at).toBeGreaterThanOrEqual(T0 + 10_000);

      s.clock.current = T0 + 1_000;
      expect(await s.service.handle(s.msg(T0 + 1_000))).toBe('retry');
      expect(s.callback.calls).toHaveLength(1);
      const row = s.fires.row('7', T0 + 1_000)!;
      // Not sent: the same attempt again after the Retry-After's end (a whole second: in the quiet part of that second), no attempt used.
      expect(row).toMatchObject({ status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: T0 + 10_000 + QUIET_FROM_MS - 1, httpStatus: null, costMs: 0 });
      expect(row.error).toMatch(/^retry_after: http:\/\/127\.0\.0\.1:1 until /);
      expect(s.publisher.retries[1]).toMatchObject({ message: { attempt: 1 }, at: T0 + 10_000 + QUIET_FROM_MS });

      s.clock.current = T0 + 10_000 + QUIET_FROM_MS;
      expect(await s.service.handle(s.msg(T0 + 1_000, 1))).toBe('succeeded');
      expect(s.callback.calls).toHaveLength(2);
      expect(s.callback.calls[1].fire).toMatchObject({ attempt: 1 });
      expect(s.callback.calls[1].fire).not.toHaveProperty('redelivery');
    });

    it('never dead-letters a fire its busy origin keeps refusing within its attempts: maxAttempts 1, five origin_busy refusals, then delivered as attempt 1', async () => {
      // A lease 10 ms above one held delivery (46.2 s with these settings): a slot is waited for 10 ms.
      const s = setup({ TIMER_ORIGIN_CONCURRENCY: '1', TIMER_EXECUTOR_CLAIM_LEASE_MS: '46210' });
      s.fires.defs.set('7', timerDef('7', { maxAttempts: 1 }));
      s.fires.addRow('7', T0);
      s.fires.addRow('7', T0 + 1);
      // The first fire's slow call holds the origin's only slot while the second is refused five times.
      let free!: () => void;
      const slow = new Promise<CallbackResult>((r) => (free = () => r({ ok: true, status: 200, costMs: 1, retryable: false })));
      s.callback.results.push(slow as unknown as CallbackResult);
      const holder = s.service.handle(s.msg(T0));
      await new Promise((r) => setTimeout(r, 20));
      for (let i = 0; i < 5; i++) {
        expect(await s.service.handle(s.msg(T0 + 1))).toBe('retry');
        const row = s.fires.row('7', T0 + 1)!;
        expect(row).toMatchObject({ status: TaskStatus.Running, attempt: 1, claimedBy: null, costMs: 0, httpStatus: null });
        expect(row.error).toMatch(/^origin_busy: /);
        expect(s.publisher.retries.at(-1)).toMatchObject({ message: { attempt: 1 } });
        s.clock.current = s.publisher.retries.at(-1)!.at;
      }
      free();
      expect(await holder).toBe('succeeded');
      expect(await s.service.handle(s.msg(T0 + 1))).toBe('succeeded');
      expect(s.fires.row('7', T0 + 1)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1 });
      expect(s.publisher.deadLetters).toHaveLength(0);
      expect(await value(s.controlMetrics.deferred, { reason: 'origin_busy' })).toBe(5);
    });

    it('ends a refused fire at its deadline, not at maxAttempts: a first attempt is recorded missed late, a retry dead-lettered (not sent before its deadline)', async () => {
      const s = setup({ TIMER_CIRCUIT_FAILURES: '1', TIMER_CIRCUIT_OPEN_MS: '600000' });
      s.fires.defs.set('7', timerDef('7', { maxAttempts: 3, backoffMs: 1_000, catchupWindowMs: 30_000 }));
      s.fires.addRow('7', T0);
      s.fires.addRow('7', T0 + 1_000);
      s.callback.results.push({ ok: false, status: 500, costMs: 1, error: 'HTTP 500', retryable: true });
      // Fire 1 fails (attempt 1 used) and opens the circuit for 10 min; its retry is due in ~1 s.
      expect(await s.service.handle(s.msg(T0))).toBe('retry');
      // Fire 2's first attempt: refused until the circuit's end, past run_at + 30 s: missed, never called.
      s.clock.current = T0 + 1_000;
      expect(await s.service.handle(s.msg(T0 + 1_000))).toBe('missed');
      expect(s.fires.row('7', T0 + 1_000)).toMatchObject({ status: TaskStatus.Missed });
      expect(s.fires.row('7', T0 + 1_000)!.error).toMatch(/^not sent before its deadline .*circuit_open: /);
      // Fire 1's attempt 2 (its retry waits for the circuit; here a second copy comes early): refused
      // until the circuit's end, past its deadline, run_at + 30 s + the first retry's longest wait + a timeout.
      expect(s.publisher.retries[0].at).toBe(T0 + 600_000);
      s.clock.current = T0 + 2_000;
      expect(await s.service.handle(s.msg(T0, 2))).toBe('failed');
      expect(s.publisher.deadLetters).toHaveLength(1);
      expect(s.publisher.deadLetters[0].properties).toMatchObject({ 'x-timer-reason': 'not sent before its deadline', 'x-timer-attempts': '1' });
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Failed });
      expect(s.callback.calls).toHaveLength(1);
    });
  });

  describe('messages of many fires', () => {
    it('delivers each fire of a batch once, and drops them all as duplicates when the batch comes back', async () => {
      const s = setup();
      const runAts = [T0 - 30, T0 - 20, T0 - 10];
      for (const r of runAts) s.fires.addRow('7', r);
      const batch = { tasks: runAts.map((runAt) => ({ timerId: '7', runAt, attempt: 1 })) };
      const lane = new FireLane(2);
      expect(await s.service.handleMessage(batch, {}, lane)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      expect(s.callback.calls.map((c) => c.fire.runAt).sort()).toEqual(runAts);
      for (const r of runAts) expect(s.fires.row('7', r)!.status).toBe(TaskStatus.Succeeded);
      expect(await s.service.handleMessage(batch, {}, lane)).toEqual(['duplicate', 'duplicate', 'duplicate']);
      expect(s.callback.calls).toHaveLength(3);
      expect(lane.inFlight).toBe(0);
    });

    it('lets a fire due soon wait for its time before it takes a slot; one far ahead takes it at once (to be handed back)', async () => {
      const s = setup();
      const soon = T0 + 700;
      const far = T0 + 60_000;
      s.fires.addRow('7', soon);
      s.fires.addRow('7', far);
      const lane = new FireLane(1);
      const batch = { tasks: [soon, far].map((runAt) => ({ timerId: '7', runAt, attempt: 1 })) };
      expect(await s.service.handleMessage(batch, {}, lane)).toEqual(['succeeded', 'deferred-early']);
      expect(s.clock.sleeps[0]).toBe(700 - ROOMY_SLOT_LEAD_MS); // waited outside the lane (which had a slot for it)
      expect(s.callback.calls.map((c) => c.fire.runAt)).toEqual([soon]);
    });

    it('drops a batch with a bad fire whole, as invalid', async () => {
      const s = setup();
      const bad = { tasks: [{ timerId: '7', runAt: T0, attempt: 1 }, { timerId: '7', runAt: T0, attempt: 0 }] };
      expect(await s.service.handleMessage(bad, {}, new FireLane(4))).toEqual(['invalid']);
      expect(s.callback.calls).toHaveLength(0);
      expect(await value(s.metrics.invalid)).toBe(1);
    });

    it("takes a message's fires in only while the lane holds fewer than its intake limit: a spike waits in the broker, not as work", async () => {
      const delivered: number[] = [];
      const calls: (() => void)[] = [];
      const admission = { admit: async (msg: { runAt: number }) => ({ admitted: true, attempt: { msg } }) };
      const delivery = {
        deliver: ({ msg }: { msg: { runAt: number } }) =>
          new Promise<string>((r) => calls.push(() => (delivered.push(msg.runAt), r('succeeded')))),
      };
      const shares = { enter: () => ({ entered: true, leave: () => undefined }), wouldHandBack: () => false, appOf: () => undefined };
      const service = new FireService(
        admission as unknown as FireAdmission,
        delivery as unknown as FireDelivery,
        new ExecutorMetrics({ registry: new Registry() } as MetricsService),
        shares as unknown as AppShareGate,
        ExecutorConfig.load({}),
        new FakeClock(T0),
      );
      const lane = new FireLane(1); // 4 fires taken in at most
      const batch = (from: number, n: number) => ({ tasks: Array.from({ length: n }, (_, i) => ({ timerId: '7', runAt: T0 - 100 + from + i, attempt: 1 })) });
      const first = service.handleMessage(batch(0, 3), {}, lane);
      const second = service.handleMessage(batch(3, 3), {}, lane); // 3 + 3 > 4: waits, its fires not queued in the lane
      const tick = () => new Promise((r) => setImmediate(r));
      await tick();
      expect([lane.inFlight, lane.queued, lane.takenIn, lane.waitingToTakeIn]).toEqual([1, 2, 3, 1]);
      calls.shift()!();
      await tick();
      expect([lane.takenIn, lane.waitingToTakeIn, lane.queued]).toEqual([2, 1, 1]); // 2 + 3 do not fit
      calls.shift()!();
      await tick();
      expect([lane.takenIn, lane.waitingToTakeIn, lane.queued]).toEqual([4, 0, 3]); // 1 + 3 do
      while (calls.length > 0 || delivered.length < 6) {
        calls.shift()?.();
        await tick();
      }
      expect(await first).toEqual(['succeeded', 'succeeded', 'succeeded']);
      expect(await second).toEqual(['succeeded', 'succeeded', 'succeeded']);
      expect(delivered).toEqual([0, 1, 2, 3, 4, 5].map((i) => T0 - 100 + i));
      expect([lane.takenIn, lane.inFlight]).toEqual([0, 0]);
    });

    it('throws (nack) once every fire finished when one outcome could not be written', async () => {
      const finished: number[] = [];
      const admission = { admit: async (msg: { runAt: number }) => ({ admitted: true, attempt: { msg } }) };
      const delivery = {
        deliver: async ({ msg }: { msg: { runAt: number } }) => {
          await new Promise((r) => setTimeout(r, msg.runAt === 2 ? 1 : 20));
          if (msg.runAt === 2) throw new Error('outcome not written');
          finished.push(msg.runAt);
          return 'succeeded';
        },
      };
      const shares = { enter: async () => ({ entered: true, leave: () => undefined }), wouldHandBack: () => false };
      const metrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
      const service = new FireService(
        admission as unknown as FireAdmission,
        delivery as unknown as FireDelivery,
        metrics,
        shares as unknown as AppShareGate,
        ExecutorConfig.load({}),
        new FakeClock(0),
      );
      const batch = { tasks: [1, 2, 3].map((runAt) => ({ timerId: '7', runAt, attempt: 1 })) };
      await expect(service.handleMessage(batch, {}, new FireLane(10))).rejects.toThrow('outcome not written');
      expect(finished.sort()).toEqual([1, 3]);
    });
  });
});

describe('FireLane', () => {
  it('runs at most its size at once and lets the waiting in in arrival order', async () => {
    const lane = new FireLane(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const work = (i: number) => lane.run(async () => {
      started.push(i);
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (i === 2) throw new Error('boom');
      return i;
    });
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map(work));
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(lane.inFlight).toBe(0);
  });

  it('hands slots over in order through a long queue and ends with none held', async () => {
    const lane = new FireLane(3);
    const order: number[] = [];
    await Promise.all(Array.from({ length: 5_000 }, (_, i) => lane.run(async () => {
      order.push(i);
      await Promise.resolve();
    })));
    expect(order).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
    expect([lane.inFlight, lane.queued]).toEqual([0, 0]);
  });
});
