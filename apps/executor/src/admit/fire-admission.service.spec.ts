import { Logger } from '@nestjs/common';
import { TaskStatus, TimerStatus } from '@timer/dal';
import { timerDef } from '../../test/fakes';
import { LIVENESS_TTL_MS } from './executor-liveness.service';
import { RECHECK_MARGIN_MS } from './fire-admission.service';
import { FIRST_CLAIM_FRESH_MS, SETTLED_CLAIM } from '@timer/redis';
import { REASSERT_WAIT_MS } from './first-claims.service';
import { MESSAGE_PROPERTIES } from '@timer/contracts';
import { setup, T0, value } from '../../test/fire-pipeline';

describe('admit, through FireService', () => {
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

    it('gives a MySQL claim back when its call stage fails before the call: the redelivery delivers at once', async () => {
      const s = setup();
      // A retry (attempt 2) is claimed in MySQL.
      s.fires.addRow('7', T0 - 5_000, { status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: null });
      const retry = { ...s.msg(T0 - 5_000), attempt: 2 };
      jest.spyOn(s.control, 'enter').mockRejectedValueOnce(new Error('origin state unreadable'));
      await expect(s.service.handle(retry)).rejects.toThrow('origin state unreadable');
      const row = s.fires.row('7', T0 - 5_000)!;
      expect(row).toMatchObject({ status: TaskStatus.Running, attempt: 2 });
      expect(row.claimedUntil).toBeLessThan(T0);
      expect(s.callback.calls).toHaveLength(0);
      // Not held back as another holder's live claim until the lease ends: claimed and called now.
      expect(await s.service.handle(retry)).toBe('succeeded');
      expect(s.callback.calls).toHaveLength(1);
      expect(s.fires.row('7', T0 - 5_000)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 2 });
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

    it('calls a re-created row with the timer read for it: a fire whose row a disable deleted is recorded missed, though the cache still said enabled', async () => {
      for (const store of ['mysql', 'redis'] as const) {
        const s = setup({ TIMER_CLAIM_STORE: store });
        s.fires.addRow('7', T0 - 1_000);
        expect(await s.service.handle(s.msg(T0 - 1_000))).toBe('succeeded');
        s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
        // The disable fenced the fire it deleted (a first claim in Redis would not read the row).
        s.firstClaimStore.values.set(`7-${T0}`, SETTLED_CLAIM);
        expect(await s.service.handle(s.msg(T0))).toBe('missed');
        expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Missed, error: 'timer disabled' });
        expect(s.callback.calls).toHaveLength(1);
      }
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

  describe('first attempts claimed in Redis (TIMER_CLAIM_STORE=redis)', () => {
    const redis = () => setup({ TIMER_CLAIM_STORE: 'redis' });
    const key = `7-${T0}`;

    it('claims an on-time first attempt in Redis: the row is written once, by the outcome, fenced on its still being pending', async () => {
      const s = redis();
      s.fires.addRow('7', T0);
      const recorded = jest.spyOn(s.fires, 'recordOutcomes');
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.fires.claims).toBe(0);
      expect(s.firstClaimStore.values.get(key)).toMatch(/^exec-a:\d+@\d+$/);
      expect(recorded.mock.calls.flat(2)).toEqual([expect.objectContaining({ firstClaim: true, attempt: 1 })]);
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1 });
      expect(s.callback.calls[0].fire).toEqual({ timerId: '7', runAt: T0, jitteredAt: T0, attempt: 1 });
    });

    it('rechecks a second message of a fire a live executor holds in Redis, within the liveness TTL', async () => {
      const s = redis();
      s.fires.addRow('7', T0);
      s.firstClaimStore.values.set(key, `exec-b:5@${T0 + 50_000}`);
      expect(await s.service.handle(s.msg(T0))).toBe('deferred-held');
      expect(s.callback.calls).toHaveLength(0);
      expect(s.publisher.deferred[0]).toMatchObject({ at: T0 + LIVENESS_TTL_MS + RECHECK_MARGIN_MS, recheck: true });
      expect(await value(s.metrics.duplicates, { reason: 'in_flight' })).toBe(1);
    });

    it('takes a fire over from a dead holder in Redis, flagged only when its call had started', async () => {
      const s = redis();
      await s.marks.open('exec-b', 0);
      await s.marks.markMany('exec-b', 0, [5]);
      s.liveness.dead.add('exec-b');
      for (const [seq, runAt] of [[5, T0], [6, T0 + 1]] as const) {
        s.fires.addRow('7', runAt);
        s.firstClaimStore.values.set(`7-${runAt}`, `exec-b:${seq}@${T0 + 50_000}`);
        expect(await s.service.handle(s.msg(runAt))).toBe('succeeded');
      }
      expect(s.callback.calls.map((c) => c.fire.redelivery ?? false)).toEqual([true, false]);
      expect(await value(s.metrics.redeliveries, { reason: 'holder_died' })).toBe(1);
      expect(s.firstClaimStore.values.get(key)).toMatch(/^exec-a:/);
      expect(s.fires.claims).toBe(0);
    });

    it('takes a fire over whose Redis claim outlived its lease, flagged lease_expired', async () => {
      const s = redis();
      s.fires.addRow('7', T0);
      s.firstClaimStore.values.set(key, `exec-b:5@${T0 - 1}`);
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.callback.calls[0].fire).toMatchObject({ redelivery: true });
      expect(await value(s.metrics.redeliveries, { reason: 'lease_expired' })).toBe(1);
    });

    it('acks a message of a settled fire as a duplicate although its Redis claim lives: the row decides', async () => {
      const s = redis();
      s.fires.addRow('7', T0, { status: TaskStatus.Succeeded, attempt: 1, claimedBy: 'exec-b:5' });
      s.firstClaimStore.values.set(key, `exec-b:5@${T0 + 50_000}`);
      expect(await s.service.handle(s.msg(T0))).toBe('duplicate');
      expect(s.callback.calls).toHaveLength(0);
    });

    it('does not deliver a fire an edit superseded after its message was published: the fence sends it to the row, which is settled', async () => {
      const s = redis();
      s.fires.addRow('7', T0, { status: TaskStatus.Missed, attempt: 0 });
      s.firstClaimStore.values.set(key, SETTLED_CLAIM);
      expect(await s.service.handle(s.msg(T0))).toBe('duplicate');
      expect(s.callback.calls).toHaveLength(0);
    });

    it('delivers a fenced fire made pending again by a later edit, unflagged: nobody called it', async () => {
      const s = redis();
      s.fires.addRow('7', T0);
      s.firstClaimStore.values.set(key, SETTLED_CLAIM);
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.callback.calls[0].fire.redelivery ?? false).toBe(false);
      expect(s.firstClaimStore.values.get(key)).toMatch(/^exec-a:/);
      expect(await value(s.metrics.redeliveries, { reason: 'lease_expired' })).toBe(0);
    });

    it('gives its Redis claim back when the call stage fails before the call (MySQL down), so the redelivery goes out at once', async () => {
      const s = redis();
      s.fires.addRow('7', T0);
      jest.spyOn(s.control, 'enter').mockRejectedValueOnce(new Error('connect ECONNREFUSED 127.0.0.1:3306'));
      await expect(s.service.handle(s.msg(T0))).rejects.toThrow('ECONNREFUSED');
      expect(s.firstClaimStore.values.has(key)).toBe(false);
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.callback.calls).toHaveLength(1);
      expect(s.callback.calls[0].fire.redelivery ?? false).toBe(false);
    });

    it('claims a first attempt later than FIRST_CLAIM_FRESH_MS, a retry and a run now in MySQL', async () => {
      const s = redis();
      s.clock.current = T0 + FIRST_CLAIM_FRESH_MS + 1;
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      s.fires.addRow('7', T0 + 1, { status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: T0 });
      expect(await s.service.handle(s.msg(T0 + 1, 2))).toBe('succeeded');
      expect(s.fires.claims).toBe(2);
      expect(s.firstClaimStore.values.size).toBe(0);
    });

    it('falls back to the MySQL claim when Redis is unreachable', async () => {
      const s = redis();
      s.firstClaimStore.fail = true;
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.fires.claims).toBe(1);
    });

    it('after a flush, holds back a message of a fire that may have been claimed before it; the recheck then finds it settled by its holder', async () => {
      const s = redis();
      s.fires.addRow('7', T0 - 1);
      expect(await s.service.handle(s.msg(T0 - 1))).toBe('succeeded');
      s.firstClaimStore.flush();
      s.fires.addRow('7', T0);
      // Its holder (another executor) records it while this message waits.
      expect(await s.service.handle(s.msg(T0))).toBe('deferred-held');
      expect(s.publisher.deferred[0]).toMatchObject({ at: T0 + REASSERT_WAIT_MS, recheck: true });
      Object.assign(s.fires.row('7', T0)!, { status: TaskStatus.Succeeded, attempt: 1, claimedBy: 'exec-b:5' });
      s.clock.current = T0 + REASSERT_WAIT_MS;
      expect(await s.service.handle(s.msg(T0), { [MESSAGE_PROPERTIES.recheck]: '1' })).toBe('duplicate');
      expect(s.callback.calls).toHaveLength(1);
    });

    it('after a flush lost its claim, a second delivery is refused its record by the row and counted, never hidden', async () => {
      const s = redis();
      s.fires.addRow('7', T0);
      // The claim of another executor's delivery in flight was flushed away; it records its outcome while ours calls.
      s.callback.deliver = async () => {
        Object.assign(s.fires.row('7', T0)!, { status: TaskStatus.Succeeded, attempt: 1, claimedBy: 'exec-b:5' });
        return { ok: true, status: 200, costMs: 1, output: 'ok', retryable: false };
      };
      expect(await s.service.handle(s.msg(T0))).toBe('fenced');
      expect(await value(s.metrics.detectedDuplicates, { reason: 'claim_lost' })).toBe(1);
      expect(s.fires.row('7', T0)).toMatchObject({ claimedBy: 'exec-b:5' });
    });
  });

  describe('bloom filter of settled fires (TIMER_EXECUTOR_BLOOM)', () => {
    const on = { TIMER_EXECUTOR_BLOOM: 'true' };

    it('adds a fire once its settled outcome is written, and drops a redelivery of it after one plain read instead of a claim', async () => {
      const s = setup(on);
      s.fires.addRow('7', T0);
      expect(await s.service.handle(s.msg(T0))).toBe('succeeded');
      expect(s.bloom.items.has(`7-${T0}`)).toBe(true);
      const claims = s.fires.claims;
      expect(await s.admission.admit(s.msg(T0), {}, true)).toEqual({ kind: 'skipped', result: 'duplicate' });
      expect(s.fires.claims).toBe(claims);
      expect(s.fires.stateReads).toBe(1);
      expect(await value(s.metrics.duplicates, { reason: 'settled' })).toBe(1);
      expect(await value(s.metrics.settledFilter, { answer: 'maybe' })).toBe(1);
      expect(await value(s.metrics.settledFilter, { answer: 'settled' })).toBe(1);
    });

    it('claims at once, without a read, a redelivered fire the filter has certainly not seen', async () => {
      const s = setup(on);
      s.fires.addRow('7', T0);
      const admitted = await s.admission.admit(s.msg(T0), {}, true);
      expect(admitted.kind).toBe('claimed');
      expect(s.fires.stateReads).toBe(0);
      expect(s.bloom.checks).toBe(1);
    });

    it('never drops a fire on "maybe" alone: a false positive is read, found open and claimed', async () => {
      const s = setup(on);
      s.fires.addRow('7', T0);
      s.bloom.items.add(`7-${T0}`); // a false positive: the filter says maybe, the row is pending
      expect((await s.admission.admit(s.msg(T0), { 'x-timer-recheck': '1' })).kind).toBe('claimed');
      expect(s.fires.stateReads).toBe(1);
    });

    it('goes on to the claim as without a filter when Redis fails or the slice has none; the claim still refuses a settled fire', async () => {
      for (const how of ['fail', 'unknown'] as const) {
        const s = setup(on);
        s.fires.addRow('7', T0, { status: TaskStatus.Succeeded, attempt: 1 });
        s.bloom[how] = true;
        expect(await s.admission.admit(s.msg(T0), {}, true)).toEqual({ kind: 'skipped', result: 'duplicate' });
        expect(s.fires.stateReads).toBe(0);
        expect(s.fires.claims).toBe(1);
      }
    });

    it('is off by default: nothing added, nothing asked', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      await s.service.handle(s.msg(T0));
      await s.admission.admit(s.msg(T0), {}, true);
      expect(s.bloom.items.size).toBe(0);
      expect(s.bloom.checks).toBe(0);
    });
  });
});
