import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { FireOutcome, FireOutcomeRepository } from '@timer/dal';
import { TaskStatus } from '@timer/dal';
import type { MetricsService } from '@timer/platform';
import { ExecutorConfig } from '../config/executor.env';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { FireLanes } from '../intake/fire-lanes';
import { InstantSends } from '../shared/instant-sends';
import { OUTCOME_HOLD_MAX_MS, OutcomeRecorder } from './outcome-recorder.service';

function outcome(i: number): FireOutcome {
  return {
    timerId: '1',
    runAt: 1_000 + i,
    token: `t${i}`,
    attempt: 1,
    status: TaskStatus.Succeeded,
    httpStatus: 200,
    costMs: 1,
    latenessMs: 1,
    error: null,
    output: null,
    claimedBy: `t${i}`,
    claimedUntil: null,
  };
}

function setup(flushMs = 50) {
  const batches: FireOutcome[][] = [];
  let failures = 0;
  const repo = {
    recordOutcomes: jest.fn(async (os: FireOutcome[]) => {
      if (failures > 0) {
        failures--;
        throw new Error('mysql gone');
      }
      batches.push(os);
      return os.map((o) => o.token !== 'lost');
    }),
  };
  const config = ExecutorConfig.load({ TIMER_EXECUTOR_FLUSH_MS: String(flushMs) });
  const metrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
  const clock = { now: () => Date.now(), sleep: async () => undefined };
  const sends = new InstantSends(clock);
  const lanes = new FireLanes(config);
  const recorder = new OutcomeRecorder(repo as unknown as FireOutcomeRepository, config, metrics, clock, undefined, sends, lanes);
  return { recorder, batches, repo, metrics, sends, lanes, fail: (n: number) => (failures = n) };
}

describe('OutcomeRecorder', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it("holds a batch while a due instant's calls go on, and writes it once they are answered or OUTCOME_HOLD_MAX_MS passed", async () => {
    const s = setup(50);
    const sent = [s.sends.begin(Date.now()), s.sends.begin(Date.now())];
    const done = s.recorder.record(outcome(1));
    await jest.advanceTimersByTimeAsync(60);
    expect(s.batches).toHaveLength(0);
    sent[0]();
    sent[0](); // once only
    await jest.advanceTimersByTimeAsync(1);
    expect(s.batches).toHaveLength(0);
    sent[1]();
    await jest.advanceTimersByTimeAsync(0);
    expect(s.batches).toHaveLength(1);
    await expect(done).resolves.toBe(true);

    const stuck = s.sends.begin(Date.now()); // a call never answered: the hold ends all the same
    s.recorder.record(outcome(2));
    await jest.advanceTimersByTimeAsync(50 + OUTCOME_HOLD_MAX_MS - 1);
    expect(s.batches).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(s.batches).toHaveLength(2);
    stuck();
  });

  it('does not hold a batch while fires wait for a slot of the due lane (its writes free the slots)', async () => {
    const s = setup(50);
    const slots = Array.from({ length: s.lanes.tasks.size }, () => s.lanes.tasks.run(() => new Promise<void>(() => undefined)));
    void s.lanes.tasks.run(async () => undefined);
    expect(s.lanes.tasks.queued).toBe(1);
    const sent = s.sends.begin(Date.now());
    s.recorder.record(outcome(1));
    await jest.advanceTimersByTimeAsync(50);
    expect(s.batches).toHaveLength(1);
    sent();
    expect(s.lanes.tasks.inFlight).toBe(slots.length);
  });

  it('writes rows together once TIMER_EXECUTOR_FLUSH_MS passed after the first', async () => {
    const s = setup(50);
    const done = [s.recorder.record(outcome(1)), s.recorder.record(outcome(2))];
    await jest.advanceTimersByTimeAsync(49);
    expect(s.batches).toHaveLength(0);
    s.recorder.record(outcome(3));
    await jest.advanceTimersByTimeAsync(1);
    expect(s.batches.map((b) => b.length)).toEqual([3]);
    await expect(Promise.all(done)).resolves.toEqual([true, true]);
    expect((await s.metrics.flushSize.get()).values.find((v) => v.metricName === 'timer_executor_flush_rows_count')?.value).toBe(1);
  });

  it('writes at once when 500 rows are queued, without waiting for the timer', async () => {
    const s = setup(10_000);
    const done = Array.from({ length: 500 }, (_, i) => s.recorder.record(outcome(i)));
    await Promise.resolve();
    await jest.advanceTimersByTimeAsync(0);
    expect(s.batches.map((b) => b.length)).toEqual([500]);
    await Promise.all(done);
    s.recorder.record(outcome(501));
    expect(s.recorder.queued).toBe(1);
  });

  it('resolves each caller with whether its claim still held', async () => {
    const s = setup(0);
    const lost = { ...outcome(9), token: 'lost' };
    const results = Promise.all([s.recorder.record(outcome(1)), s.recorder.record(lost)]);
    await jest.advanceTimersByTimeAsync(0);
    await expect(results).resolves.toEqual([true, false]);
  });

  it('flush() writes what is queued now and waits for it (the shutdown path)', async () => {
    const s = setup(10_000);
    const p = s.recorder.record(outcome(1));
    await s.recorder.beforeApplicationShutdown();
    expect(s.batches).toHaveLength(1);
    await expect(p).resolves.toBe(true);
  });

  it('retries a failed write, then rejects every caller of the batch (their messages get nacked)', async () => {
    const s = setup(0);
    s.fail(1);
    const ok = s.recorder.record(outcome(1));
    await jest.advanceTimersByTimeAsync(0);
    await expect(ok).resolves.toBe(true);
    // A MySQL restart of a few seconds: five failures in 6.2 s, the sixth attempt lands.
    s.fail(5);
    const recovered = s.recorder.record(outcome(2));
    await jest.advanceTimersByTimeAsync(6_200);
    await expect(recovered).resolves.toBe(true);
    expect(s.repo.recordOutcomes).toHaveBeenCalledTimes(2 + 6);
    s.fail(6);
    const bad = s.recorder.record(outcome(3));
    const caught = bad.catch((e: Error) => e.message);
    await jest.advanceTimersByTimeAsync(6_200);
    await expect(caught).resolves.toBe('mysql gone');
    expect(s.repo.recordOutcomes).toHaveBeenCalledTimes(2 + 6 + 6);
  });
});
