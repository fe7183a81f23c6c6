import { Logger } from '@nestjs/common';
import { MigratorConfig, MigratorEnv } from '../config/migrator.env';
import { KeyPurger, PURGE_BATCH, PURGE_EVERY_MS, PURGE_MAX_BATCHES, RetentionService, TaskPurger } from './retention.service';

const DAY = 86_400_000;
const T0 = Date.UTC(2030, 0, 1);

function setup(env: Partial<MigratorEnv> = {}) {
  const calls: [number, number, number | undefined][] = [];
  let fail = false;
  let backlog = 0;
  const tasks: TaskPurger = {
    purgeOlderThan: async (cutoff, batch, maxBatches) => {
      if (fail) throw new Error('mysql went away');
      calls.push([cutoff, batch, maxBatches]);
      const cap = batch * (maxBatches ?? Infinity);
      const deleted = backlog > 0 ? Math.min(backlog, cap) : 7;
      backlog = Math.max(0, backlog - cap);
      return deleted;
    },
  };
  const keyCalls: number[] = [];
  const keys: KeyPurger = {
    purgeOlderThan: async (cutoff) => {
      if (fail) throw new Error('mysql went away');
      keyCalls.push(cutoff);
      return 3;
    },
  };
  const clock = { now: () => now };
  let now = T0;
  const service = new RetentionService(tasks, keys, clock, new MigratorConfig(Object.assign(new MigratorEnv(), env)));
  return {
    service,
    calls,
    keyCalls,
    advance: (ms: number) => (now += ms),
    failNext: () => (fail = true),
    recover: () => (fail = false),
    backlog: (rows: number) => (backlog = rows),
  };
}

describe('RetentionService', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  it('deletes records older than the retention (default 30 days) in batches, at most hourly', async () => {
    const s = setup();
    expect(await s.service.purgeIfDue()).toBe(7);
    expect(s.calls).toEqual([[T0 - 30 * DAY, PURGE_BATCH, PURGE_MAX_BATCHES]]);
    s.advance(PURGE_EVERY_MS - 1);
    expect(await s.service.purgeIfDue()).toBe(0);
    expect(s.calls).toHaveLength(1);
    s.advance(1);
    expect(await s.service.purgeIfDue()).toBe(7);
    expect(s.calls[1]).toEqual([T0 + PURGE_EVERY_MS - 30 * DAY, PURGE_BATCH, PURGE_MAX_BATCHES]);
  });

  it('keeps everything with retention 0, and survives a failed purge', async () => {
    expect(await setup({ TIMER_TASK_RETENTION_DAYS: 0 }).service.purgeIfDue()).toBe(0);
    const s = setup({ TIMER_TASK_RETENTION_DAYS: 2 });
    s.failNext();
    expect(await s.service.purgeIfDue()).toBe(0);
    s.recover();
    s.advance(PURGE_EVERY_MS);
    expect(await s.service.purgeIfDue()).toBe(7);
    expect(s.calls).toEqual([[T0 + PURGE_EVERY_MS - 2 * DAY, PURGE_BATCH, PURGE_MAX_BATCHES]]);
  });

  it('works a large backlog off tick by tick, at most PURGE_MAX_BATCHES statements each, then hourly', async () => {
    const s = setup();
    const cap = PURGE_BATCH * PURGE_MAX_BATCHES;
    s.backlog(2 * cap + 10);
    expect(await s.service.purgeIfDue()).toBe(cap);
    s.advance(60_000); // the next migrator tick, not an hour later
    expect(await s.service.purgeIfDue()).toBe(cap);
    s.advance(60_000);
    expect(await s.service.purgeIfDue()).toBe(10);
    s.advance(60_000);
    expect(await s.service.purgeIfDue()).toBe(0); // done: back to hourly
    expect(s.calls).toHaveLength(3);
  });

  it('deletes idempotency keys older than 24 h at the same pace, also when fire records are kept forever', async () => {
    const s = setup({ TIMER_TASK_RETENTION_DAYS: 0 });
    expect(await s.service.purgeIfDue()).toBe(0);
    expect(s.keyCalls).toEqual([T0 - DAY]);
    expect(s.calls).toEqual([]);
    s.advance(PURGE_EVERY_MS - 1);
    await s.service.purgeIfDue();
    expect(s.keyCalls).toHaveLength(1);
    s.advance(1);
    await s.service.purgeIfDue();
    expect(s.keyCalls).toEqual([T0 - DAY, T0 + PURGE_EVERY_MS - DAY]);
  });
});
