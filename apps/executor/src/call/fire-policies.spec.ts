import { Logger } from '@nestjs/common';
import { TaskStatus } from '@timer/dal';
import { timerDef } from '../../test/fakes';
import { jitterOf } from '../admit/jitter';
import { LEASE, setup, T0, value } from '../../test/fire-pipeline';

describe('call, through FireService: fire policies', () => {
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
});
