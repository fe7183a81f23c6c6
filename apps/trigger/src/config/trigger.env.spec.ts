import { KNOWN_VARIABLES } from '@timer/platform';
import { ConfigError, loadConfig } from '@timer/platform';
import { TRIGGER_VARIABLES, TriggerConfig, TriggerEnv } from './trigger.env';

describe('TriggerEnv', () => {
  it('has the documented defaults', () => {
    const c = new TriggerConfig(loadConfig(TriggerEnv, {}));
    expect([c.stepMs, c.leadMs, c.reconcileMs, c.concurrency, c.leaseMs]).toEqual([200, 500, 10_000, 32, 5_000]);
  });

  it('reads the variables as numbers', () => {
    const c = new TriggerConfig(loadConfig(TriggerEnv, { TIMER_TRIGGER_STEP_MS: '100', TIMER_TRIGGER_LEAD_MS: '0', TIMER_SLICE_LEASE_MS: '5000' }));
    expect([c.stepMs, c.leadMs, c.leaseMs]).toEqual([100, 0, 5_000]);
  });

  it('refuses a walk that runs further ahead than fires created near now are covered', () => {
    expect(() => new TriggerConfig(loadConfig(TriggerEnv, { TIMER_TRIGGER_LEAD_MS: '1900', TIMER_TRIGGER_STEP_MS: '200' }))).toThrow(/TIMER_TRIGGER_LEAD_MS \+ TIMER_TRIGGER_STEP_MS must be at most 2000/);
    expect(new TriggerConfig(loadConfig(TriggerEnv, { TIMER_TRIGGER_LEAD_MS: '1800', TIMER_TRIGGER_STEP_MS: '200' })).leadMs).toBe(1_800);
  });

  it('names a bad variable', () => {
    expect(() => loadConfig(TriggerEnv, { TIMER_TRIGGER_STEP_MS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig(TriggerEnv, { TIMER_TRIGGER_CONCURRENCY: 'many' })).toThrow(/TIMER_TRIGGER_CONCURRENCY/);
  });

  it('lists its variables for bootstrapRole', () => {
    expect(TRIGGER_VARIABLES).toEqual(
      expect.arrayContaining(['TIMER_TRIGGER_STEP_MS', 'TIMER_TRIGGER_LEAD_MS', 'TIMER_TRIGGER_RECONCILE_MS', 'TIMER_TRIGGER_CONCURRENCY', 'TIMER_SLICE_LEASE_MS']),
    );
  });
});

describe('TRIGGER_VARIABLES', () => {
  it('are known to every role, so a shared environment does not read as typos', () => {
    expect(KNOWN_VARIABLES).toEqual(expect.arrayContaining([...TRIGGER_VARIABLES]));
  });
});
