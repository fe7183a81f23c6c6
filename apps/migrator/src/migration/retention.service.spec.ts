import { Logger } from '@nestjs/common';
import { MigratorConfig, MigratorEnv } from '../config/migrator.env';
import { PURGE_BATCH, PURGE_EVERY_MS, RetentionService, TaskPurger } from './retention.service';

const DAY = 86_400_000;
const T0 = Date.UTC(2030, 0, 1);

function setup(env: Partial<MigratorEnv> = {}) {
  const calls: [number, number][] = [];
  let fail = false;
  const tasks: TaskPurger = {
    purgeOlderThan: async (cutoff, batch) => {
      if (fail) throw new Error('mysql went away');
      calls.push([cutoff, batch]);
      return 7;
    },
  };
  const clock = { now: () => now };
  let now = T0;
  const service = new RetentionService(tasks, clock, new MigratorConfig(Object.assign(new MigratorEnv(), env)));
  return { service, calls, advance: (ms: number) => (now += ms), failNext: () => (fail = true), recover: () => (fail = false) };
}

describe('RetentionService', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  it('deletes records older than the retention (default 30 days) in batches, at most hourly', async () => {
    const s = setup();
    expect(await s.service.purgeIfDue()).toBe(7);
    expect(s.calls).toEqual([[T0 - 30 * DAY, PURGE_BATCH]]);
    s.advance(PURGE_EVERY_MS - 1);
    expect(await s.service.purgeIfDue()).toBe(0);
    expect(s.calls).toHaveLength(1);
    s.advance(1);
    expect(await s.service.purgeIfDue()).toBe(7);
    expect(s.calls[1]).toEqual([T0 + PURGE_EVERY_MS - 30 * DAY, PURGE_BATCH]);
  });

  it('keeps everything with retention 0, and survives a failed purge', async () => {
    expect(await setup({ TIMER_TASK_RETENTION_DAYS: 0 }).service.purgeIfDue()).toBe(0);
    const s = setup({ TIMER_TASK_RETENTION_DAYS: 2 });
    s.failNext();
    expect(await s.service.purgeIfDue()).toBe(0);
    s.recover();
    s.advance(PURGE_EVERY_MS);
    expect(await s.service.purgeIfDue()).toBe(7);
    expect(s.calls).toEqual([[T0 + PURGE_EVERY_MS - 2 * DAY, PURGE_BATCH]]);
  });
});
