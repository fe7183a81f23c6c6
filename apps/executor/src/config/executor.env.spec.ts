import { KNOWN_VARIABLES } from '@timer/platform';
import { ConfigError } from '@timer/platform';
import { ExecutorConfig, EXECUTOR_VARIABLES } from './executor.env';

describe('ExecutorConfig', () => {
  it('has the documented defaults', () => {
    const c = ExecutorConfig.load({});
    expect(c.concurrency).toBe(1_000);
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

  it('names a bad variable', () => {
    expect(() => ExecutorConfig.load({ TIMER_EXECUTOR_CONCURRENCY: 'many' })).toThrow(/TIMER_EXECUTOR_CONCURRENCY/);
  });

  it('refuses a lease shorter than one held delivery', () => {
    expect(() => ExecutorConfig.load({ TIMER_EXECUTOR_CLAIM_LEASE_MS: '12000', TIMER_CALLBACK_TIMEOUT_MS: '10000' })).toThrow(ConfigError);
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
