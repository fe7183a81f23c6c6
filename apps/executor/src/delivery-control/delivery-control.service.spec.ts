import { Registry } from 'prom-client';
import type { CallbackResult } from '@timer/callback';
import type { MetricsService } from '@timer/platform';
import { FakeClock } from '../../test/fakes';
import { ExecutorConfig } from '../config/executor.env';
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
