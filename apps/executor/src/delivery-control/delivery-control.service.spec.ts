import { Registry } from 'prom-client';
import type { CallbackResult } from '@timer/callback';
import type { MetricsService } from '@timer/platform';
import type { TimerDefinitionRepository } from '@timer/dal';
import { FakeClock, FakeFires, FakePublisher, timerDef } from '../../test/fakes';
import { ExecutorConfig } from '../config/executor.env';
import { ExecutorMetrics } from '../shared/executor.metrics';
import type { PauseWatch } from '../shared/pause-watch.service';
import type { SettledFires } from '../shared/settled-fires.service';
import type { FirePublisher } from '../fire/fire-publisher';
import { TimerCache } from '../shared/timer-cache.service';
import { AppShareGate, MAX_SHARE_DEFERRALS, shareDeferralMs, SHARE_DEFERRAL_MAX_MS } from '../intake/app-share.gate';
import { DeliveryControlMetrics, TOP_ORIGINS } from './delivery-control.metrics';
import { DeliveryControl, originOf } from './delivery-control.service';

const T0 = Date.UTC(2030, 0, 1, 12);
const ok: CallbackResult = { ok: true, status: 200, costMs: 1, retryable: false };
const refused: CallbackResult = { ok: false, costMs: 1, error: 'ECONNREFUSED', retryable: true };

function setup(env: NodeJS.ProcessEnv = {}) {
  const clock = new FakeClock(T0);
  const registry = new Registry();
  const config = ExecutorConfig.load({ TIMER_CIRCUIT_FAILURES: '2', TIMER_CIRCUIT_OPEN_MS: '5000', ...env });
  const metrics = new DeliveryControlMetrics({ registry } as MetricsService);
  const control = new DeliveryControl(config, metrics, clock);
  return { clock, registry, config, metrics, control };
}

async function go(control: DeliveryControl, url: string, result: CallbackResult): Promise<number> {
  const gate = await control.enter(url);
  if (!gate.go) throw new Error(`refused: ${gate.reason}`);
  return gate.done(result);
}

describe('DeliveryControl', () => {
  it('names origins with their port', () => {
    expect(originOf('https://a.example/x?y')).toBe('https://a.example:443');
    expect(originOf('http://a.example:8080/x')).toBe('http://a.example:8080');
    expect(originOf('nonsense')).toBeNull();
    expect(originOf(undefined)).toBeNull();
  });

  it('defers fires of an origin within its Retry-After, as a retryable attempt naming the reason, and lets others go', async () => {
    const s = setup();
    const notBefore = await go(s.control, 'http://a:1/x', { ok: false, status: 503, costMs: 1, retryable: true, retryAfterMs: 10_000 });
    expect(notBefore).toBe(T0 + 10_000);
    s.clock.current += 9_000;
    const gate = await s.control.enter('http://a:1/other-path');
    expect(gate).toMatchObject({ go: false, reason: 'retry_after', until: T0 + 10_000, result: { ok: false, retryable: true, costMs: 0 } });
    expect(!gate.go && gate.result.error).toMatch(/^retry_after: http:\/\/a:1 until /);
    expect((await s.control.enter('http://b:1/')).go).toBe(true);
    s.clock.current = T0 + 10_000;
    expect((await s.control.enter('http://a:1/')).go).toBe(true);
    expect(await s.registry.getSingleMetricAsString('timer_delivery_deferred_total')).toContain('timer_delivery_deferred_total{reason="retry_after"} 1');
  });

  it('opens the circuit after consecutive failures, sends one probe after the open time, and exports the state', async () => {
    const s = setup();
    await go(s.control, 'http://down:1/', refused);
    const reopen = await go(s.control, 'http://down:1/', refused);
    expect(reopen).toBe(T0 + 5_000);
    expect(await s.control.enter('http://down:1/')).toMatchObject({ go: false, reason: 'circuit_open', until: T0 + 5_000 });
    expect(await s.registry.getSingleMetricAsString('timer_origin_circuit_state')).toContain('timer_origin_circuit_state{origin="http://down:1"} 2');
    // The probe fails: the fire that met it waiting is deferred for another open period.
    s.clock.current = T0 + 5_000;
    const probe = await s.control.enter('http://down:1/');
    expect(probe.go).toBe(true);
    const waiting = s.control.enter('http://down:1/');
    if (probe.go) expect(probe.done(refused)).toBe(T0 + 10_000);
    expect(await waiting).toMatchObject({ go: false, reason: 'circuit_open', until: T0 + 10_000 });
    // The next probe succeeds: the fire waiting for it goes too, and the circuit is closed.
    s.clock.current = T0 + 10_000;
    const probe2 = await s.control.enter('http://down:1/');
    const waiting2 = s.control.enter('http://down:1/');
    if (probe2.go) expect(probe2.done(ok)).toBe(T0 + 10_000);
    expect((await waiting2).go).toBe(true);
    expect(await s.registry.getSingleMetricAsString('timer_origin_circuit_state')).toContain('timer_origin_circuit_state{origin="http://down:1"} 0');
    expect(await s.registry.getSingleMetricAsString('timer_origin_circuit_opened_total')).toContain(' 2');
  });

  it(`exports the ${TOP_ORIGINS} busiest origins by name and the worst of the rest as other`, async () => {
    const s = setup();
    for (let i = 0; i < TOP_ORIGINS; i++) for (let k = 0; k < 3; k++) await go(s.control, `http://busy${i}:1/`, ok);
    for (let k = 0; k < 2; k++) await go(s.control, 'http://quiet:1/', refused);
    await go(s.control, 'http://quiet2:1/', ok);
    const text = await s.registry.getSingleMetricAsString('timer_origin_circuit_state');
    expect(text.split('\n').filter((l) => l.startsWith('timer_origin_circuit_state{'))).toHaveLength(TOP_ORIGINS + 1);
    expect(text).toContain('timer_origin_circuit_state{origin="other"} 2');
    expect(text).not.toContain('quiet');
  });

  it('takes back a slot given up unused (cancel): free again, the circuit learns nothing, a cancelled probe lets the next fire probe', async () => {
    const s = setup({ TIMER_ORIGIN_CONCURRENCY: '1', TIMER_EXECUTOR_CLAIM_LEASE_MS: '46250' });
    const first = await s.control.enter('http://a:1/');
    if (first.go) first.cancel();
    const second = await s.control.enter('http://a:1/');
    expect(second.go).toBe(true);
    if (second.go) second.done(ok);
    await go(s.control, 'http://down:1/', refused);
    await go(s.control, 'http://down:1/', refused);
    s.clock.current = T0 + 5_000;
    const probe = await s.control.enter('http://down:1/');
    if (probe.go) probe.cancel();
    expect((await s.control.enter('http://down:1/')).go).toBe(true);
  });

  it('defers as origin_busy when no slot of the origin frees within the wait', async () => {
    const s = setup({ TIMER_ORIGIN_CONCURRENCY: '1', TIMER_EXECUTOR_CLAIM_LEASE_MS: '46250' }); // no spare lease: no wait
    expect(s.config.originMaxWaitMs).toBe(0);
    const first = await s.control.enter('http://a:1/');
    expect(await s.control.enter('http://a:1/')).toMatchObject({ go: false, reason: 'origin_busy' });
    if (first.go) first.done(ok);
    expect((await s.control.enter('http://a:1/')).go).toBe(true);
  });
});

describe('AppShareGate', () => {
  function gate(concurrency: string) {
    const s = setup({ TIMER_EXECUTOR_CONCURRENCY: concurrency });
    const fires = new FakeFires();
    const execMetrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
    const cache = new TimerCache(fires as unknown as TimerDefinitionRepository, s.config, execMetrics, s.clock);
    for (const [id, app] of [['1', 'a'], ['2', 'a'], ['3', 'b']]) fires.defs.set(id, timerDef(id, { app }));
    const publisher = new FakePublisher();
    const settledIds = new Set<string>();
    const paused = new Set<string>();
    const settled = { isSettled: async (m: { fireId: string }) => settledIds.has(m.fireId) } as unknown as SettledFires;
    const pauses = { get any() { return paused.size > 0; }, verdict: (app: string) => (paused.has(app) ? 'skip' : 'deliver') } as unknown as PauseWatch;
    const g = new AppShareGate(s.control, cache, publisher as unknown as FirePublisher, s.config, s.metrics, s.clock, settled, pauses);
    const msg = (timerId: string, attempt = 1) => ({ timerId, runAt: T0, fireId: `${timerId}-${T0}`, attempt });
    return { ...s, g, publisher, msg, settledIds, paused };
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
