import { Registry, Counter } from 'prom-client';
import type { CallbackClient } from '@timer/callback';
import type { FireClaimRepository, FireOutcomeRepository, TaskRepository, TimerDefinitionRepository } from '@timer/dal';
import type { MetricsService } from '@timer/platform';
import type { CallMarks, FireClaims, InFlightFires, MaintenanceWindows, PausedApps, PauseState, SliceBloom } from '@timer/redis';
import { FireWriter } from '@timer/fire';
import type { MaintenanceWindow } from '@timer/schedule';
import { FakeBloom, FakeCallback, FakeCallMarks, FakeClock, FakeFireClaims, FakeFires, FakeInFlightFires, FakeLiveness, FakePublisher, timerDef } from './fakes';
import { ExecutorConfig } from '../src/config/executor.env';
import { AppShareGate } from '../src/intake/app-share.gate';
import { DeliveryControlMetrics } from '../src/delivery-control/delivery-control.metrics';
import { DeliveryControl } from '../src/delivery-control/delivery-control.service';
import { AttemptOutcomes } from '../src/settle/attempt-outcomes.service';
import { CallStarts } from '../src/admit/call-starts.service';
import { ClaimBatcher } from '../src/admit/claim-batcher.service';
import { ExecutorMetrics } from '../src/shared/executor.metrics';
import { type ExecutorLiveness } from '../src/admit/executor-liveness.service';
import { FireAdmission } from '../src/admit/fire-admission.service';
import { FirstClaims } from '../src/admit/first-claims.service';
import { FireDelivery } from '../src/call/fire-delivery.service';
import type { FirePublisher } from '../src/fire/fire-publisher';
import { FireService } from '../src/fire/fire.service';
import { OutcomeRecorder } from '../src/settle/outcome-recorder.service';
import { OverlapGuard } from '../src/call/overlap-guard.service';
import { MaintenanceGate } from '../src/call/maintenance-gate.service';
import { MaintenanceWatch } from '../src/call/maintenance-watch.service';
import { PauseWatch } from '../src/shared/pause-watch.service';
import { SettledFires } from '../src/shared/settled-fires.service';
import { TimerCache } from '../src/shared/timer-cache.service';

/**
 * The executor's fire path assembled from its stages over fakes (FakeFires for the tables, FakeFireClaims
 * for the first attempts' claims in Redis), for the stage specs. Claims are MySQL's unless `env` says
 * TIMER_CLAIM_STORE=redis.
 */
export const T0 = Date.UTC(2030, 0, 1, 12);
export const LEASE = 60_000;

export async function value(counter: Counter<string>, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await counter.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return hit?.value ?? 0;
}

export function setup(env: NodeJS.ProcessEnv = {}) {
  const clock = new FakeClock(T0);
  const fires = new FakeFires();
  const callback = new FakeCallback();
  const publisher = new FakePublisher();
  const config = ExecutorConfig.load({ TIMER_EXECUTOR_FLUSH_MS: '0', TIMER_CLAIM_STORE: 'mysql', ...env });
  const metrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
  // FakeFires stands in for the three fire repositories and TaskRepository (one tasks table).
  const claims = fires as unknown as FireClaimRepository;
  const cache = new TimerCache(fires as unknown as TimerDefinitionRepository, config, metrics, clock);
  const bloom = new FakeBloom();
  const settled = new SettledFires(claims, config.bloomFalsePositiveRate === null ? null : (bloom as unknown as SliceBloom), undefined, metrics);
  const recorder = new OutcomeRecorder(fires as unknown as FireOutcomeRepository, config, metrics, clock, undefined, undefined, undefined, settled);
  const pub = publisher as unknown as FirePublisher;
  const liveness = new FakeLiveness();
  const marks = new FakeCallMarks();
  const calls = new CallStarts(marks as unknown as CallMarks, liveness as unknown as ExecutorLiveness, config, metrics);
  const firstClaimStore = new FakeFireClaims();
  const firstClaims = new FirstClaims(firstClaimStore as unknown as FireClaims, claims, fires as unknown as FireOutcomeRepository, config, metrics, clock);
  const outcomes = new AttemptOutcomes(recorder, config, metrics, clock, firstClaims);
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
  const admission = new FireAdmission(new ClaimBatcher(claims, metrics, clock), claims, fires as unknown as TaskRepository, liveness as unknown as ExecutorLiveness, config, metrics, clock, pauses, cache, calls, undefined, settled, firstClaims);
  const service = new FireService(
    admission,
    new FireDelivery(cache, callback as unknown as CallbackClient, config, metrics, clock, new OverlapGuard(inFlight as unknown as InFlightFires, claims, config, clock), control, new MaintenanceGate(maintenance, writer), calls),
    outcomes,
    pub,
    metrics,
    new AppShareGate(control, cache, config, controlMetrics, clock, settled, pauses),
    config,
    clock,
  );
  fires.defs.set('7', timerDef('7'));
  const msg = (runAt: number, attempt = 1) => ({ timerId: '7', runAt, fireId: `7-${runAt}`, attempt });
  return { clock, fires, callback, publisher, metrics, service, admission, bloom, cache, msg, liveness, marks, pausedApps, pauses, inFlight, windows, maintenance, indexed, taskMessages, controlMetrics, control, firstClaimStore };
}
