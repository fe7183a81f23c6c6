import { FireHistogram, QuotaRepository } from '@timer/dal';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { Quota, QuotaService } from './quota.service';

const T = Date.UTC(2030, 0, 1, 10, 0, 0);
const m = {} as EntityManager;
const NO_QUOTA: Quota = { maxTimers: 0, maxFiresPerMinute: 0, minIntervalMs: 0 };

describe('QuotaService admission against the capacity', () => {
  let now = T;
  let reads = 0;
  let stored: FireHistogram;
  let service: QuotaService;

  beforeEach(() => {
    now = T;
    reads = 0;
    // Two fires pending at T + 2 s (all apps).
    stored = new Map([[T + 2_000, 2]]);
    const repo = {
      pendingHistogram: jest.fn(async (o: { timerId?: string }) => {
        if (o.timerId !== undefined) return new Map();
        reads++;
        return new Map(stored);
      }),
    } as unknown as QuotaRepository;
    const config = ApiConfig.load({ TIMER_CAPACITY_FIRES_PER_SEC: '3' });
    service = new QuotaService(config, { now: () => now }, {} as DataSource, repo);
  });

  const oneShot = (runAt: number, writesFires = true) => ({ app: 'a', spec: { runAt, timeZone: 'UTC' }, isNew: false, writesFires });
  const refusal = async (p: Promise<void>) => (await p.then(() => undefined, (e: ApiError) => e))?.message;

  it('reuses the load it read for a few seconds, counting the fires it admitted meanwhile; a create (nothing written) is not counted', async () => {
    await service.admit(m, NO_QUOTA, oneShot(T + 2_000, false), now);
    await service.admit(m, NO_QUOTA, oneShot(T + 2_000), now);
    expect(await refusal(service.admit(m, NO_QUOTA, oneShot(T + 2_000), now))).toBe(
      `admission: the second ${new Date(T + 2_000).toISOString()} would have 4 fires (3 scheduled + 1 of this timer), over the capacity of 3 fires/s (TIMER_CAPACITY_FIRES_PER_SEC)`,
    );
    // Another second is free.
    await service.admit(m, NO_QUOTA, oneShot(T + 3_000), now);
    expect(reads).toBe(1);
    // Past the reuse, the rows are read again (and now say the second has room).
    stored = new Map([[T + 2_000, 1]]);
    now = T + 5_000;
    await service.admit(m, NO_QUOTA, oneShot(T + 9_000), now);
    expect(reads).toBe(2);
  });

  it('does nothing with capacity 0', async () => {
    const off = new QuotaService(ApiConfig.load({ TIMER_CAPACITY_FIRES_PER_SEC: '0' }), { now: () => now }, {} as DataSource, {} as QuotaRepository);
    await expect(off.admit(m, NO_QUOTA, oneShot(T + 2_000), now)).resolves.toBeUndefined();
  });
});
