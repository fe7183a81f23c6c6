import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { FireOutcome, FireOutcomeRepository } from '@timer/dal';
import { ConfigError, KNOWN_VARIABLES } from '@timer/platform';
import type { MetricsService } from '@timer/platform';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { OutcomeRecorder } from '../settle/outcome-recorder.service';
import { ExecutorConfig, EXECUTOR_VARIABLES, OUTCOME_WRITE_RETRY_BACKOFF_MS } from './executor.env';

describe('ExecutorConfig', () => {
  it('has the documented defaults', () => {
    const c = ExecutorConfig.load({});
    expect(c.concurrency).toBe(5_000);
    expect(c.leaseMs).toBe(60_000);
    expect(c.cacheTtlMs).toBe(2_000);
    expect(c.prefetchMs).toBe(60_000);
    expect(c.flushMs).toBe(50);
    expect(c.maxEarlyWaitMs).toBe(5_000);
    expect(c.misfireWindowMs).toBe(3_600_000);
    expect(c.callbackTimeoutMs).toBe(5_000);
    expect(c.allowPrivate).toBe(false);
  });

  it('reads the variables', () => {
    const c = ExecutorConfig.load({ TIMER_EXECUTOR_CONCURRENCY: '8', TIMER_CALLBACK_ALLOW_PRIVATE: 'true', TIMER_MISFIRE_WINDOW_MS: '1000' });
    expect(c.concurrency).toBe(8);
    expect(c.allowPrivate).toBe(true);
    expect(c.misfireWindowMs).toBe(1_000);
  });

  it('reads "false" as false (implicit conversion would make any non-empty string true)', () => {
    expect(ExecutorConfig.load({ TIMER_CALLBACK_ALLOW_PRIVATE: 'false' }).allowPrivate).toBe(false);
    expect(ExecutorConfig.load({ TIMER_CALLBACK_ALLOW_PRIVATE: '0' }).allowPrivate).toBe(false);
  });

  it('keeps content-type and 4096 body bytes of an answer by default; reads, bounds and names the record variables', () => {
    expect(ExecutorConfig.load({})).toMatchObject({ recordHeaders: ['content-type'], recordBodyBytes: 4_096 });
    expect(ExecutorConfig.load({ TIMER_RECORD_HEADERS: ' Content-Type, X-Request-Id ', TIMER_RECORD_BODY_BYTES: '0' })).toMatchObject({
      recordHeaders: ['content-type', 'x-request-id'],
      recordBodyBytes: 0,
    });
    expect(ExecutorConfig.load({ TIMER_RECORD_HEADERS: 'None' }).recordHeaders).toEqual([]);
    expect(() => ExecutorConfig.load({ TIMER_RECORD_BODY_BYTES: '65537' })).toThrow(/TIMER_RECORD_BODY_BYTES/);
    expect(() => ExecutorConfig.load({ TIMER_RECORD_BODY_BYTES: '-1' })).toThrow(/TIMER_RECORD_BODY_BYTES/);
    expect(() => ExecutorConfig.load({ TIMER_RECORD_HEADERS: 'content type;x' })).toThrow(/TIMER_RECORD_HEADERS/);
  });

  it('keeps the bloom filter off by default; reads its false-positive rate and refuses one outside 0.0001..0.5', () => {
    expect(ExecutorConfig.load({}).bloomFalsePositiveRate).toBeNull();
    expect(ExecutorConfig.load({ TIMER_EXECUTOR_BLOOM: 'true' }).bloomFalsePositiveRate).toBe(0.01);
    expect(ExecutorConfig.load({ TIMER_EXECUTOR_BLOOM: 'true', TIMER_EXECUTOR_BLOOM_FP_RATE: '0.001' }).bloomFalsePositiveRate).toBe(0.001);
    for (const bad of ['0', '0.6', 'often']) expect(() => ExecutorConfig.load({ TIMER_EXECUTOR_BLOOM_FP_RATE: bad })).toThrow(/TIMER_EXECUTOR_BLOOM_FP_RATE/);
  });

  it('names a bad variable', () => {
    expect(() => ExecutorConfig.load({ TIMER_EXECUTOR_CONCURRENCY: 'many' })).toThrow(/TIMER_EXECUTOR_CONCURRENCY/);
  });

  it('refuses a lease shorter than one held delivery', () => {
    expect(() => ExecutorConfig.load({ TIMER_EXECUTOR_CLAIM_LEASE_MS: '12000', TIMER_CALLBACK_TIMEOUT_MS: '10000' })).toThrow(ConfigError);
  });

  describe('minimum lease', () => {
    const settings = { TIMER_EXECUTOR_MAX_EARLY_WAIT_MS: '4000', TIMER_CALLBACK_TIMEOUT_MS: '10000', TIMER_CALLBACK_TIMEOUT_MAX_MS: '10000', TIMER_EXECUTOR_FLUSH_MS: '2000' };
    // early wait + callback timeout + flush interval + write retries' backoff + write margin
    const min = 4_000 + 10_000 + 2_000 + 6_200 + 5_000;

    it('includes the outcome flush interval and the write retries', () => {
      expect(ExecutorConfig.load({ ...settings, TIMER_EXECUTOR_CLAIM_LEASE_MS: String(min) }).leaseMs).toBe(min);
      expect(() => ExecutorConfig.load({ ...settings, TIMER_EXECUTOR_CLAIM_LEASE_MS: String(min - 1) })).toThrow(ConfigError);
      // The flush interval alone makes the difference: 26,000 covers the rest (25,200), not 2,000 ms of flushing too.
      expect(() => ExecutorConfig.load({ ...settings, TIMER_EXECUTOR_CLAIM_LEASE_MS: '26000' })).toThrow(/TIMER_EXECUTOR_FLUSH_MS \(2000\)/);
      expect(ExecutorConfig.load({ ...settings, TIMER_EXECUTOR_FLUSH_MS: '0', TIMER_EXECUTOR_CLAIM_LEASE_MS: '26000' }).leaseMs).toBe(26_000);
    });

    it('names every term and the total', () => {
      let message = '';
      try {
        ExecutorConfig.load({ ...settings, TIMER_EXECUTOR_CLAIM_LEASE_MS: '15000' });
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toContain(
        `TIMER_EXECUTOR_CLAIM_LEASE_MS: must be at least TIMER_EXECUTOR_MAX_EARLY_WAIT_MS (4000) + TIMER_CALLBACK_TIMEOUT_MAX_MS (10000) + ` +
          `TIMER_EXECUTOR_FLUSH_MS (2000) + the outcome write retries' backoff (6200) + 5000 for the outcome writes = ${min} (got 15000)`,
      );
    });

    it('covers the longest callback a timer may ask for (TIMER_CALLBACK_TIMEOUT_MAX_MS), or the global timeout when that is longer', () => {
      const longer = { ...settings, TIMER_CALLBACK_TIMEOUT_MAX_MS: '20000' };
      expect(() => ExecutorConfig.load({ ...longer, TIMER_EXECUTOR_CLAIM_LEASE_MS: String(min) })).toThrow(/TIMER_CALLBACK_TIMEOUT_MAX_MS \(20000\)/);
      expect(ExecutorConfig.load({ ...longer, TIMER_EXECUTOR_CLAIM_LEASE_MS: String(min + 10_000) }).callbackTimeoutMaxMs).toBe(20_000);
      const shorter = { ...settings, TIMER_CALLBACK_TIMEOUT_MAX_MS: '2000' };
      expect(() => ExecutorConfig.load({ ...shorter, TIMER_EXECUTOR_CLAIM_LEASE_MS: String(min - 1) })).toThrow(/TIMER_CALLBACK_TIMEOUT_MS \(10000\)/);
      expect(() => ExecutorConfig.load({ TIMER_CALLBACK_TIMEOUT_MAX_MS: '999' })).toThrow(/TIMER_CALLBACK_TIMEOUT_MAX_MS/);
      expect(ExecutorConfig.load({}).callbackTimeoutMaxMs).toBe(30_000);
    });

    it("counts the outcome recorder's real retry backoff", async () => {
      Logger.overrideLogger(false);
      try {
        const slept: number[] = [];
        const repo = { recordOutcomes: jest.fn(async () => Promise.reject(new Error('mysql gone'))) };
        const config = ExecutorConfig.load({ TIMER_EXECUTOR_FLUSH_MS: '0' });
        const metrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
        const clock = { now: () => Date.now(), sleep: async (ms: number) => void slept.push(ms) };
        const recorder = new OutcomeRecorder(repo as unknown as FireOutcomeRepository, config, metrics, clock);
        await expect(recorder.record({ timerId: '1', runAt: 1 } as FireOutcome)).rejects.toThrow('mysql gone');
        expect(repo.recordOutcomes).toHaveBeenCalledTimes(slept.length + 1);
        expect(slept.reduce((a, b) => a + b, 0)).toBe(OUTCOME_WRITE_RETRY_BACKOFF_MS);
      } finally {
        Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']);
      }
    });
  });

  it('lists its variables for bootstrapRole', () => {
    expect(EXECUTOR_VARIABLES).toContain('TIMER_EXECUTOR_FLUSH_MS');
    expect(EXECUTOR_VARIABLES).toContain('TIMER_CALLBACK_ALLOW_PRIVATE');
  });
});

describe('EXECUTOR_VARIABLES', () => {
  it('are known to every role, so a shared environment does not read as typos', () => {
    expect(KNOWN_VARIABLES).toEqual(expect.arrayContaining([...EXECUTOR_VARIABLES]));
  });
});
