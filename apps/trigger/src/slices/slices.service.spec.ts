import { Logger } from '@nestjs/common';
import { SliceMessage } from '@timer/contracts';
import { LifecycleService } from '@timer/platform';
import { Registry } from 'prom-client';
import { SliceWalker, WalkResult } from './slice-walker';
import { ShuttingDownError, SlicesService } from './slices.service';
import { TriggerMetrics } from './trigger.metrics';

const SLICE: SliceMessage = { minute: 1_893_456_000_000, bucket: 2, buckets: 10, lockToken: 'tok' };

function setup(walk: (slice: SliceMessage, stop: () => boolean) => Promise<WalkResult>) {
  const registry = new Registry();
  const metrics = new TriggerMetrics(registry);
  const lifecycle = new LifecycleService();
  const walker = { walk: jest.fn(walk) } as unknown as SliceWalker;
  const service = new SlicesService(walker, metrics, lifecycle);
  const count = async (outcome: string) =>
    ((await registry.getSingleMetric('timer_trigger_slices_total')!.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0);
  return { service, walker, lifecycle, count };
}

describe('SlicesService', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  it('resolves (ack) when the slice finished or was superseded', async () => {
    for (const result of ['finished', 'superseded'] as const) {
      const { service, count } = setup(async () => result);
      await expect(service.handle(SLICE)).resolves.toBeUndefined();
      expect(await count(result)).toBe(1);
    }
  });

  it('throws "shutting down" (nack) when the walk stopped, and tells the walk to stop once draining', async () => {
    let stopSeen = false;
    const { service, lifecycle, count } = setup(async (_s, stop) => {
      lifecycle.startDraining();
      stopSeen = stop();
      return 'stopped';
    });
    await expect(service.handle(SLICE)).rejects.toThrow(ShuttingDownError);
    expect(stopSeen).toBe(true);
    expect(await count('stopped')).toBe(1);
  });

  it('refuses new slices after the module is destroyed', async () => {
    const { service, walker } = setup(async () => 'finished');
    service.onModuleDestroy();
    await expect(service.handle(SLICE)).rejects.toThrow(/shutting down/);
    expect(walker.walk).not.toHaveBeenCalled();
  });

  it('lets a failure through (nack) and counts it', async () => {
    const { service, count } = setup(async () => {
      throw new Error('mysql and redis down');
    });
    await expect(service.handle(SLICE)).rejects.toThrow(/down/);
    expect(await count('failed')).toBe(1);
  });

  it('acks an invalid message (it can never succeed) without walking', async () => {
    const { service, walker, count } = setup(async () => 'finished');
    await expect(service.handle({ minute: 'x' })).resolves.toBeUndefined();
    expect(walker.walk).not.toHaveBeenCalled();
    expect(await count('invalid')).toBe(1);
  });
});
