import { KNOWN_VARIABLES } from '@timer/platform';
import { ConfigError, loadConfig, loadRoleConfig } from '@timer/platform';
import { AppModule } from '../app.module';
import { MIGRATOR_VARIABLES, MigratorConfig, MigratorEnv } from './migrator.env';

describe('MigratorEnv', () => {
  it('has documented defaults', () => {
    const c = new MigratorConfig(loadConfig(MigratorEnv, {}));
    expect(c.env).toMatchObject({ TIMER_WINDOW_MINUTES: 60, TIMER_MIGRATOR_TICK_MS: 10_000, TIMER_MIGRATOR_PAGE_SIZE: 500, TIMER_MIGRATOR_LOCK_LEASE_MS: 60_000, TIMER_MIGRATOR_CATCHUP_MINUTES: 60 });
    expect(c.windowMs).toBe(3_600_000);
    expect(c.catchUpMs).toBe(3_600_000);
    expect(c.pace).toEqual({ lagMs: 100, leadMs: 30_000, maxSpanMs: 30_000, maxPauseMs: 1_000, quietAtMs: 250, quietForMs: 500 });
    expect(MIGRATOR_VARIABLES).toEqual(expect.arrayContaining(['TIMER_WINDOW_MINUTES', 'TIMER_MIGRATOR_TICK_MS', 'TIMER_MIGRATOR_PAGE_SIZE']));
  });

  it('reads numbers from strings', () => {
    expect(loadConfig(MigratorEnv, { TIMER_WINDOW_MINUTES: '15', TIMER_MIGRATOR_PAGE_SIZE: '50' })).toMatchObject({ TIMER_WINDOW_MINUTES: 15, TIMER_MIGRATOR_PAGE_SIZE: 50 });
  });

  it('stops the boot naming every bad variable', () => {
    const role = loadRoleConfig('migrator', {});
    try {
      AppModule.register(role, { TIMER_WINDOW_MINUTES: '0', TIMER_MIGRATOR_PAGE_SIZE: 'many', TIMER_MIGRATOR_TICK_MS: '60000', TIMER_MIGRATOR_PACE_MAX_PAUSE_MS: '0' });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const names = [...new Set((e as ConfigError).problems.map((p) => p.split(':')[0]))].sort();
      expect(names).toEqual(['TIMER_MIGRATOR_PACE_MAX_PAUSE_MS', 'TIMER_MIGRATOR_PAGE_SIZE', 'TIMER_WINDOW_MINUTES']);
    }
  });
});

describe('MIGRATOR_VARIABLES', () => {
  it('are known to every role, so a shared environment does not read as typos', () => {
    expect(KNOWN_VARIABLES).toEqual(expect.arrayContaining([...MIGRATOR_VARIABLES]));
  });
});
