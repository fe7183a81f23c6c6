import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { TaskStatus } from '@timer/dal';
import type { MetricsService } from '@timer/platform';
import { FakeClock, FakePublisher, timerDef } from '../../test/fakes';
import { ExecutorConfig } from '../config/executor.env';
import { AppShareGate } from '../intake/app-share.gate';
import { AttemptOutcomes } from '../settle/attempt-outcomes.service';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { FireAdmission } from '../admit/fire-admission.service';
import { EARLY_CALL_MARK_MS, FireDelivery } from '../call/fire-delivery.service';
import type { FirePublisher } from './fire-publisher';
import { FireLane } from '../intake/fire-lanes';
import { FireService } from './fire.service';
import { QUIET_FROM_MS } from '../shared/instant-waits';
import { ROOMY_SLOT_LEAD_MS } from '../intake/slot-leads';
import { LIGHT_FIRST_MAX_MS } from '../call/light-first';
import { setup, T0, value } from '../../test/fire-pipeline';

describe('FireService: intake (lanes, app shares) and the orchestrator', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

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
      const admission = { admit: async (msg: { runAt: number }) => ({ kind: 'claimed', attempt: { msg } }) };
      const delivery = {
        deliver: ({ msg }: { msg: { runAt: number } }) =>
          new Promise<{ kind: string }>((r) => calls.push(() => (delivered.push(msg.runAt), r({ kind: 'called' })))),
        settled: async () => undefined,
      };
      const outcomes = { outcomeOf: () => ({ kind: 'succeeded' }), record: async () => 'succeeded' };
      const shares = { enter: () => ({ entered: true, leave: () => undefined }), wouldHandBack: () => false, appOf: () => undefined };
      const service = new FireService(
        admission as unknown as FireAdmission,
        delivery as unknown as FireDelivery,
        outcomes as unknown as AttemptOutcomes,
        new FakePublisher() as unknown as FirePublisher,
        new ExecutorMetrics({ registry: new Registry() } as MetricsService),
        shares as unknown as AppShareGate,
        ExecutorConfig.load({}),
        new FakeClock(T0),
      );
      const lane = new FireLane(2); // 4 fires taken in at most
      expect(lane.intakeLimit).toBe(4);
      const batch = (from: number, n: number) => ({ tasks: Array.from({ length: n }, (_, i) => ({ timerId: '7', runAt: T0 - 100 + from + i, attempt: 1 })) });
      const first = service.handleMessage(batch(0, 3), {}, lane);
      const second = service.handleMessage(batch(3, 3), {}, lane); // 3 + 3 > 4: waits, its fires not queued in the lane
      const tick = () => new Promise((r) => setImmediate(r));
      await tick();
      expect([lane.inFlight, lane.queued, lane.takenIn, lane.waitingToTakeIn]).toEqual([2, 1, 3, 1]);
      calls.shift()!();
      await tick();
      expect([lane.takenIn, lane.waitingToTakeIn, lane.queued]).toEqual([2, 1, 0]); // 2 + 3 do not fit
      calls.shift()!();
      await tick();
      expect([lane.takenIn, lane.waitingToTakeIn, lane.queued]).toEqual([4, 0, 2]); // 1 + 3 do
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
      const admission = { admit: async (msg: { runAt: number }) => ({ kind: 'claimed', attempt: { msg } }) };
      const delivery = { deliver: async ({ msg }: { msg: { runAt: number } }) => ({ kind: 'called', msg }), settled: async () => undefined };
      const outcomes = {
        outcomeOf: (called: { msg: { runAt: number } }) => called,
        record: async ({ msg }: { msg: { runAt: number } }) => {
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
        outcomes as unknown as AttemptOutcomes,
        new FakePublisher() as unknown as FirePublisher,
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
