import { KNOWN_VARIABLES } from '@timer/platform';
import { ConfigError, loadConfig, loadRoleConfig } from '@timer/platform';
import { AppModule } from '../app.module';
import { SCHEDULER_VARIABLES, SchedulerEnv } from './scheduler.env';

describe('SchedulerEnv', () => {
  it('has documented defaults', () => {
    expect(loadConfig(SchedulerEnv, {})).toMatchObject({ TIMER_SCHEDULER_TICK_MS: 1000, TIMER_SCHEDULER_LOOKBACK_MINUTES: 60, TIMER_SLICE_LEASE_MS: 5_000, TIMER_SCHEDULER_CATCHUP_SLICES: 8 });
    expect(SCHEDULER_VARIABLES).toEqual(['TIMER_SLICE_LEASE_MS', 'TIMER_SCHEDULER_TICK_MS', 'TIMER_SCHEDULER_LOOKBACK_MINUTES', 'TIMER_SCHEDULER_LEAD_MS', 'TIMER_SCHEDULER_CATCHUP_SLICES']);
  });

  it('refuses a tick above one second and names every bad variable', () => {
    const role = loadRoleConfig('scheduler', {});
    try {
      AppModule.register(role, { TIMER_SCHEDULER_TICK_MS: '5000', TIMER_SCHEDULER_LOOKBACK_MINUTES: '0', TIMER_SLICE_LEASE_MS: '30000' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const names = [...new Set((e as ConfigError).problems.map((p) => p.split(':')[0]))].sort();
      expect(names).toEqual(['TIMER_SCHEDULER_LOOKBACK_MINUTES', 'TIMER_SCHEDULER_TICK_MS']);
    }
  });
});

describe('SCHEDULER_VARIABLES', () => {
  it('are known to every role, so a shared environment does not read as typos', () => {
    expect(KNOWN_VARIABLES).toEqual(expect.arrayContaining([...SCHEDULER_VARIABLES]));
  });
});
