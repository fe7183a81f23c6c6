import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { FireClaimRepository, FireOutcome, FireOutcomeRepository } from '@timer/dal';
import { TaskStatus } from '@timer/dal';
import type { MetricsService } from '@timer/platform';
import { FIRST_CLAIM_FRESH_MS, type FireClaims } from '@timer/redis';
import { FakeClock, FakeFireClaims, FakeFires } from '../../test/fakes';
import { value } from '../../test/fire-pipeline';
import { ExecutorConfig } from '../config/executor.env';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { FirstClaims, parseHeld, REASSERT_WAIT_MS } from './first-claims.service';

const T0 = Date.UTC(2030, 0, 1, 12);
const LEASE = 60_000;
const fire = (runAt: number, timerId = '7') => ({ fireId: `${timerId}-${runAt}`, timerId, runAt });

function setup() {
  const clock = new FakeClock(T0);
  const store = new FakeFireClaims();
  const fires = new FakeFires();
  const metrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
  const config = ExecutorConfig.load({ TIMER_CLAIM_STORE: 'redis' });
  const first = new FirstClaims(store as unknown as FireClaims, fires as unknown as FireClaimRepository, fires as unknown as FireOutcomeRepository, config, metrics, clock);
  return { clock, store, fires, metrics, first };
}

function outcome(runAt: number, patch: Partial<FireOutcome> = {}): FireOutcome {
  return {
    timerId: '7',
    runAt,
    token: 'exec-a:1',
    attempt: 1,
    status: TaskStatus.Succeeded,
    httpStatus: 200,
    costMs: 3,
    latenessMs: 1,
    error: null,
    output: 'ok',
    claimedBy: 'exec-a:1',
    claimedUntil: null,
    startedAt: runAt + 1,
    firstClaim: true,
    ...patch,
  };
}

describe('FirstClaims (first attempts claimed in Redis)', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  it('sends the asks of one event-loop turn as one batch: a free fire claimed with its lease end, a held one reported with its holder, a look that finds nothing left to MySQL', async () => {
    const { store, first } = setup();
    store.values.set(fire(T0 + 1).fireId, `exec-b:4@${T0 + 30_000}`);
    const results = await Promise.all([first.claim(fire(T0), T0, 'exec-a:1'), first.claim(fire(T0 + 1), T0 + 1, 'exec-a:2'), first.claim(fire(T0 + 2), T0 + 2, null)]);
    expect(store.batches).toHaveLength(1);
    expect(results).toEqual([
      { kind: 'claimed', lost: false },
      { kind: 'held', claim: { value: `exec-b:4@${T0 + 30_000}`, token: 'exec-b:4', until: T0 + 30_000 } },
      { kind: 'mysql' },
    ]);
    expect(store.values.get(fire(T0).fireId)).toBe(`exec-a:1@${T0 + LEASE}`);
    expect(store.values.has(fire(T0 + 2).fireId)).toBe(false);
  });

  it('takes a new claim only for a fire at most FIRST_CLAIM_FRESH_MS past its due time, and its key outlives the lease and that span', () => {
    const { clock, first } = setup();
    clock.current = T0 + FIRST_CLAIM_FRESH_MS;
    expect(first.fresh(T0)).toBe(true);
    clock.current += 1;
    expect(first.fresh(T0)).toBe(false);
    expect(first.ttlMs).toBeGreaterThanOrEqual(2 * LEASE + 60_000);
    expect(first.ttlMs).toBeGreaterThanOrEqual(FIRST_CLAIM_FRESH_MS + ExecutorConfig.load({}).maxEarlyWaitMs + 60_000);
  });

  it('keeps a claim key past the freshness span plus the longest early wait whatever the lease', () => {
    const config = ExecutorConfig.load({ TIMER_CLAIM_STORE: 'redis', TIMER_CALLBACK_TIMEOUT_MS: '2000', TIMER_CALLBACK_TIMEOUT_MAX_MS: '2000', TIMER_EXECUTOR_CLAIM_LEASE_MS: '20000' });
    const first = new FirstClaims(new FakeFireClaims() as unknown as FireClaims, {} as FireClaimRepository, {} as FireOutcomeRepository, config, new ExecutorMetrics({ registry: new Registry() } as MetricsService), new FakeClock(T0));
    // A key set as early as a fire may be claimed expires only after the last instant a new claim of it is fresh.
    expect(T0 - config.maxEarlyWaitMs + first.ttlMs).toBeGreaterThan(T0 + FIRST_CLAIM_FRESH_MS);
    expect(first.ttlMs).toBeGreaterThanOrEqual(2 * config.leaseMs + 60_000);
  });

  it('hands every fire of a batch to the MySQL claim when Redis fails', async () => {
    const { store, first } = setup();
    store.fail = true;
    await expect(Promise.all([first.claim(fire(T0), T0, 'exec-a:1'), first.claim(fire(T0 + 1), T0 + 1, null)])).resolves.toEqual([{ kind: 'mysql' }, { kind: 'mysql' }]);
  });

  it('after Redis lost its claims (the epoch gone): writes its claims in flight again, holds back a fire that may have been claimed before, then flags its claim, for one claim TTL', async () => {
    const { clock, store, first } = setup();
    await first.claim(fire(T0), T0, 'exec-a:1');
    store.flush();
    clock.current = T0 + 10_000;
    const [near, later] = await Promise.all([first.claim(fire(T0 + 12_000), T0 + 12_000, 'exec-a:2'), first.claim(fire(T0 + 20_000), T0 + 20_000, 'exec-a:3')]);
    expect(near).toEqual({ kind: 'wait', until: T0 + 10_000 + REASSERT_WAIT_MS });
    expect(later).toEqual({ kind: 'claimed', lost: false });
    await new Promise((r) => setImmediate(r));
    // The claim in flight is back; the held-back fire's claim was given back.
    expect(store.values.get(fire(T0).fireId)).toBe(`exec-a:1@${T0 + LEASE}`);
    expect(store.values.has(fire(T0 + 12_000).fireId)).toBe(false);
    clock.current += REASSERT_WAIT_MS;
    expect(await first.claim(fire(T0 + 12_000), T0 + 12_000, 'exec-a:4')).toEqual({ kind: 'claimed', lost: true });
    clock.current += first.ttlMs;
    expect(await first.claim(fire(T0 + 13_000), T0 + 13_000, 'exec-a:5')).toEqual({ kind: 'claimed', lost: false });
  });

  it('finds a loss on its beat too, and forgets a claim once its outcome is recorded', async () => {
    const { store, first } = setup();
    await first.claim(fire(T0), T0, 'exec-a:1');
    await first.claim(fire(T0 + 1), T0 + 1, 'exec-a:2');
    first.settled(fire(T0 + 1).fireId);
    store.flush();
    await first.beat();
    await new Promise((r) => setImmediate(r));
    expect([...store.values.keys()]).toEqual([fire(T0).fireId]);
  });

  it('learns a loss another executor found first (the epoch replaced), and takes a missing epoch at its first batch for granted', async () => {
    const { clock, store, first } = setup();
    store.flush();
    expect(await first.claim(fire(T0), T0, 'exec-a:1')).toEqual({ kind: 'claimed', lost: false });
    store.values.clear();
    store.current = 'written-by-another-executor';
    clock.current = T0 + 1_000;
    expect(await first.claim(fire(T0 + 2_000), T0 + 2_000, 'exec-a:2')).toEqual({ kind: 'wait', until: T0 + 1_000 + REASSERT_WAIT_MS });
  });

  it('takes a held claim over only while it still holds the value read', async () => {
    const { store, first } = setup();
    const held = parseHeld(`exec-b:4@${T0 - 1}`);
    store.values.set(fire(T0).fireId, held.value);
    expect(await first.takeOver(fire(T0), held, 'exec-a:9')).toBe(true);
    expect(store.values.get(fire(T0).fireId)).toBe(`exec-a:9@${T0 + LEASE}`);
    expect(await first.takeOver(fire(T0), held, 'exec-c:1')).toBe(false);
  });

  it('reads a value of another shape as an unknown holder whose lease is over', () => {
    expect(parseHeld('exec-b:4')).toEqual({ value: 'exec-b:4', token: 'exec-b:4', until: 0 });
  });

  describe('an outcome its row refused', () => {
    it('files a row that is gone again with the outcome', async () => {
      const { fires, first, metrics } = setup();
      const written = await first.refused(outcome(T0), 'app', true);
      expect(written).toBe(true);
      expect(fires.row('7', T0)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1, app: 'app' });
      expect(await value(metrics.detectedDuplicates, { reason: 'claim_lost' })).toBe(0);
    });

    it('counts a call that went out for a fire another executor had settled: a second delivery, detected', async () => {
      const { fires, first, metrics } = setup();
      fires.addRow('7', T0, { status: TaskStatus.Succeeded, attempt: 1, claimedBy: 'exec-b:1' });
      expect(await first.refused(outcome(T0), 'app', true)).toBe(false);
      expect(await value(metrics.detectedDuplicates, { reason: 'claim_lost' })).toBe(1);
      expect(fires.row('7', T0)).toMatchObject({ claimedBy: 'exec-b:1' });
    });

    it('leaves a row an edit superseded (never attempted) as it is, without counting a duplicate', async () => {
      const { fires, first, metrics } = setup();
      fires.addRow('7', T0, { status: TaskStatus.Missed, error: 'superseded by version 2' });
      expect(await first.refused(outcome(T0), 'app', true)).toBe(false);
      expect(await value(metrics.detectedDuplicates, { reason: 'claim_lost' })).toBe(0);
      expect(fires.row('7', T0)).toMatchObject({ status: TaskStatus.Missed, attempt: 0 });
    });

    it('does not count an attempt that called nothing (recorded missed, or refused by its origin)', async () => {
      const { fires, first, metrics } = setup();
      fires.addRow('7', T0, { status: TaskStatus.Succeeded, attempt: 1, claimedBy: 'exec-b:1' });
      expect(await first.refused(outcome(T0, { status: TaskStatus.Missed, startedAt: null }), 'app', false)).toBe(false);
      expect(await value(metrics.detectedDuplicates, { reason: 'claim_lost' })).toBe(0);
    });
  });
});
