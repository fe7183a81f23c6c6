import { Registry } from 'prom-client';
import type { TaskMessage } from '@timer/contracts';
import type { TimerDefinitionRepository } from '@timer/dal';
import type { MetricsService } from '@timer/platform';
import { FakeClock, FakeFires, timerDef } from '../../test/fakes';
import { ExecutorConfig } from '../config/executor.env';
import { DeliveryControlMetrics } from '../delivery-control/delivery-control.metrics';
import { DeliveryControl } from '../delivery-control/delivery-control.service';
import { ExecutorMetrics } from '../shared/executor.metrics';
import type { PauseWatch } from '../shared/pause-watch.service';
import type { Screen, SettledFires } from '../shared/settled-fires.service';
import { TimerCache } from '../shared/timer-cache.service';
import { AppShareGate, MAX_SHARE_DEFERRALS, shareDeferralMs, SHARE_DEFERRAL_MAX_MS } from './app-share.gate';

const T0 = Date.UTC(2030, 0, 1, 12);

function setup(env: NodeJS.ProcessEnv = {}) {
  const clock = new FakeClock(T0);
  const config = ExecutorConfig.load({ TIMER_CIRCUIT_FAILURES: '2', TIMER_CIRCUIT_OPEN_MS: '5000', ...env });
  const metrics = new DeliveryControlMetrics({ registry: new Registry() } as MetricsService);
  const control = new DeliveryControl(config, metrics, clock);
  return { clock, config, metrics, control };
}

describe('AppShareGate', () => {
  function gate(concurrency: string) {
    const s = setup({ TIMER_EXECUTOR_CONCURRENCY: concurrency });
    const fires = new FakeFires();
    const execMetrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
    const cache = new TimerCache(fires as unknown as TimerDefinitionRepository, s.config, execMetrics, s.clock);
    for (const [id, app] of [['1', 'a'], ['2', 'a'], ['3', 'b']]) fires.defs.set(id, timerDef(id, { app }));
    // The hand-backs the gate asks for (the orchestrator publishes them).
    const publisher = { handedBack: [] as { message: TaskMessage; at: number; deferrals: number }[] };
    const settledIds = new Set<string>();
    const paused = new Set<string>();
    // The bloom filter, when `bloom.on`: its answer per fire id ('unknown' when not set); rows read counted.
    const bloom = { on: false, answers: new Map<string, Screen>(), reads: 0 };
    const settled = {
      get screening() {
        return bloom.on;
      },
      screen: async (m: { fireId: string }) => bloom.answers.get(m.fireId) ?? 'unknown',
      isSettled: async (m: { fireId: string }) => {
        bloom.reads++;
        return settledIds.has(m.fireId);
      },
    } as unknown as SettledFires;
    const pauses = { get any() { return paused.size > 0; }, verdict: (app: string) => (paused.has(app) ? 'skip' : 'deliver') } as unknown as PauseWatch;
    const g = new AppShareGate(s.control, cache, s.config, s.metrics, s.clock, settled, pauses);
    const enter = g.enter.bind(g);
    g.enter = (message, properties) => {
      const recorded = (entry: Awaited<ReturnType<typeof enter>>) => {
        if (!entry.entered) publisher.handedBack.push({ message, at: entry.at, deferrals: entry.deferrals });
        return entry;
      };
      const entry = enter(message, properties);
      return entry instanceof Promise ? entry.then(recorded) : recorded(entry);
    };
    const msg = (timerId: string, attempt = 1) => ({ timerId, runAt: T0, fireId: `${timerId}-${T0}`, attempt });
    return { ...s, g, publisher, msg, settledIds, paused, bloom };
  }

  it("over its app's share, lets a settled fire (once looked up) and a paused app's first attempt through to the admission (which drops them) instead of handing them back again and again", async () => {
    const s = gate('2');
    expect((await s.g.enter(s.msg('3'), {})).entered).toBe(true);
    expect((await s.g.enter(s.msg('1'), {})).entered).toBe(true); // a at its share of 1
    s.settledIds.add(`2-${T0}`);
    // A settled fire is looked up at the 3rd hand-back (2 before it), not on the first ones.
    expect((await s.g.enter(s.msg('2'), {})).entered).toBe(false);
    expect((await s.g.enter(s.msg('2'), { 'x-timer-deferrals': '2' })).entered).toBe(true);
    s.publisher.handedBack.length = 0;
    s.settledIds.clear();
    s.paused.add('a');
    expect((await s.g.enter(s.msg('2'), {})).entered).toBe(true);
    // A retry of a paused app is still delivered (a pause stops first attempts only): handed back.
    expect((await s.g.enter(s.msg('2', 2), {})).entered).toBe(false);
    expect(s.publisher.handedBack).toHaveLength(1);
    expect(s.control.shares.held('a')).toBe(1); // the ones let through hold nothing
  });

  it('shouldDrop: a paused app\'s scheduled first attempt, not a run now of it; a settled fire at the 3rd, 9th and 33rd hand-back', async () => {
    const s = gate('2');
    s.paused.add('a');
    expect(await s.g.shouldDrop(s.msg('1'), {})).toBe(true);
    expect(await s.g.shouldDrop(s.msg('1'), { 'x-timer-run-now': '1' })).toBe(false);
    expect(await s.g.shouldDrop(s.msg('3'), {})).toBe(false);
    s.settledIds.add(`3-${T0}`);
    expect(await s.g.shouldDrop(s.msg('3'), {})).toBe(false);
    for (const n of [2, 8, 32]) expect(await s.g.shouldDrop(s.msg('3'), { 'x-timer-deferrals': String(n) })).toBe(true);
    expect(await s.g.shouldDrop(s.msg('3'), { 'x-timer-deferrals': '3' })).toBe(false);
  });

  it('shouldDrop with the bloom filter: asked at the same hand-backs; no read for a fire it has not seen, a read for one it may have or when it knows nothing', async () => {
    const s = gate('2');
    s.bloom.on = true;
    s.settledIds.add(`3-${T0}`);
    s.bloom.answers.set(`3-${T0}`, 'not-settled'); // not possible for a settled fire: shows that no read is made
    expect(await s.g.shouldDrop(s.msg('3'), { 'x-timer-deferrals': '2' })).toBe(false);
    expect(s.bloom.reads).toBe(0);
    s.bloom.answers.set(`3-${T0}`, 'maybe');
    expect(await s.g.shouldDrop(s.msg('3'), {})).toBe(false); // not a hand-back where it is looked up
    expect(await s.g.shouldDrop(s.msg('3'), { 'x-timer-deferrals': '8' })).toBe(true);
    s.bloom.answers.delete(`3-${T0}`);
    expect(await s.g.shouldDrop(s.msg('3'), { 'x-timer-deferrals': '32' })).toBe(true);
    expect(s.bloom.reads).toBe(2);
  });

  it('hands a message over its app\'s share back to the broker, counting the hand-backs, while another app goes on', async () => {
    const s = gate('2');
    expect((await s.g.enter(s.msg('3'), {})).entered).toBe(true); // app b: from now on each app's share is 1
    const held = await s.g.enter(s.msg('1'), {});
    expect(held.entered).toBe(true);
    expect(await s.g.enter(s.msg('2'), { 'x-timer-deferrals': '3' })).toMatchObject({ entered: false });
    expect(s.publisher.handedBack).toHaveLength(1);
    const back = s.publisher.handedBack[0];
    expect(back.deferrals).toBe(4);
    expect(back.at - T0).toBeGreaterThanOrEqual(8_000 * 0.8);
    expect(back.at - T0).toBeLessThanOrEqual(8_000 * 1.2);
    // Asked-for messages and those handed back too often are taken anyway.
    expect((await s.g.enter(s.msg('2'), { 'x-timer-run-now': '1' })).entered).toBe(true);
    expect((await s.g.enter(s.msg('2'), { 'x-timer-deferrals': String(MAX_SHARE_DEFERRALS) })).entered).toBe(true);
    if (held.entered) held.leave();
    expect(s.control.shares.held('a')).toBe(2);
  });

  it('waits 1 s * 2^n, at most 30 s, with jitter', () => {
    expect(shareDeferralMs(0, () => 0.5)).toBe(1_000);
    expect(shareDeferralMs(2, () => 0)).toBe(3_200);
    expect(shareDeferralMs(40, () => 1)).toBe(SHARE_DEFERRAL_MAX_MS * 1.2);
  });
});
