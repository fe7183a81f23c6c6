import { Logger } from '@nestjs/common';
import type { CallbackResult } from '@timer/callback';
import { TaskStatus, TimerStatus } from '@timer/dal';
import type { MaintenanceWindow } from '@timer/schedule';
import { timerDef } from '../../test/fakes';
import { QUIET_FROM_MS } from '../shared/instant-waits';
import { LEASE, setup, T0, value } from '../../test/fire-pipeline';

describe('call, through FireService', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

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
});
