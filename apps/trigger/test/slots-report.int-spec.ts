import { loadConfig } from '@timer/platform';
import { redisTestContext } from '@timer/testing';
import { TriggerSlots } from '@timer/redis';
import { TriggerConfig, TriggerEnv } from '../src/config/trigger.env';
import { SlotsReport } from '../src/slices/slots-report';

describe('SlotsReport against a real Redis', () => {
  const ctx = redisTestContext();
  const NOW = 1_900_000_000_000;

  it('reports the trigger\'s concurrency from boot and withdraws it at shutdown', async () => {
    const config = new TriggerConfig(loadConfig(TriggerEnv, { TIMER_TRIGGER_CONCURRENCY: '48' }));
    const report = new SlotsReport(ctx.redis, ctx.prefix, config, { now: () => NOW });
    const slots = new TriggerSlots(ctx.redis, ctx.prefix);
    report.onApplicationBootstrap();
    for (let i = 0; i < 100 && (await slots.live(NOW)) === null; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await slots.live(NOW)).toEqual({ processes: 1, slots: 48, largest: 48 });
    await report.onApplicationShutdown();
    expect(await slots.live(NOW)).toBeNull();
  });
});
