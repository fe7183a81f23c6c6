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
    const config = ApiConfig.load({ TIMER_CAPACITY_FIRES_PER_SEC: '3' });
    service = new QuotaService(config, { now: () => now }, {} as DataSource, repoOf(() => stored));
  });

  const repoOf = (load: () => FireHistogram) =>
    ({
      pendingHistogram: jest.fn(async (o: { timerId?: string }) => {
        if (o.timerId !== undefined) return new Map();
        reads++;
        return new Map(load());
      }),
    }) as unknown as QuotaRepository;

  const oneShot = (runAt: number, writesFires = true) => ({ app: 'a', spec: { runAt, timeZone: 'UTC' }, writesFires });
  const refusal = async (p: Promise<unknown>) => (await p.then(() => undefined, (e: ApiError) => e))?.message;

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
    await expect(off.admit(m, NO_QUOTA, oneShot(T + 2_000), now)).resolves.toBeNull();
    await expect(off.admit(m, NO_QUOTA, { ...oneShot(T + 2_000), spread: { jitterMs: 5_000 } }, now)).resolves.toBe(0);
  });

  it('autoSpread: 0 when the timer fits as it is, else the least-loaded offset within its jitter (ties: the smallest), its fires then counted there', async () => {
    const spread = (jitterMs: number, writesFires = true) => ({ ...oneShot(T + 2_000, writesFires), spread: { jitterMs } });
    stored = new Map([[T + 2_000, 2]]);
    expect(await service.admit(m, NO_QUOTA, spread(3_000, false), now)).toBe(0); // 3 of 3 at T + 2 s: fits as it is
    stored = new Map([
      [T + 2_000, 3],
      [T + 3_000, 1],
    ]);
    now = T + 1_000; // a fresh read
    service = new QuotaService(ApiConfig.load({ TIMER_CAPACITY_FIRES_PER_SEC: '3' }), { now: () => now }, {} as DataSource, repoOf(() => stored));
    // +0: 4 at T + 2 s (over); +1 s: 2 at T + 3 s; +2 s: 1 at T + 4 s, the least loaded.
    expect(await service.admit(m, NO_QUOTA, spread(3_000), now)).toBe(2_000);
    // Its fire now counts at T + 4 s: +1 s and +2 s both give 2, the smaller wins.
    expect(await service.admit(m, NO_QUOTA, spread(3_000), now)).toBe(1_000);
    // Without autoSpread the same timer is refused as before.
    expect(await refusal(service.admit(m, NO_QUOTA, oneShot(T + 2_000), now))).toBe(
      `admission: the second ${new Date(T + 2_000).toISOString()} would have 4 fires (3 scheduled + 1 of this timer), over the capacity of 3 fires/s (TIMER_CAPACITY_FIRES_PER_SEC)`,
    );
  });

  it('autoSpread: 429 naming the second, its load and the least-loaded offset when no offset within the jitter fits', async () => {
    stored = new Map([
      [T + 2_000, 3],
      [T + 3_000, 3],
      [T + 4_000, 3],
    ]);
    expect(await refusal(service.admit(m, NO_QUOTA, { ...oneShot(T + 2_000), spread: { jitterMs: 3_000 } }, now))).toBe(
      `admission: the second ${new Date(T + 2_000).toISOString()} would have 4 fires (3 scheduled + 1 of this timer), over the capacity of 3 fires/s (TIMER_CAPACITY_FIRES_PER_SEC); ` +
        `autoSpread: no offset within jitterMs (3000 ms) fits, the least loaded (+0 ms) would put 4 fires on the second ${new Date(T + 2_000).toISOString()}`,
    );
    // A jitter of a second or less allows offset 0 only (the projection's step is a second).
    expect(await refusal(service.admit(m, NO_QUOTA, { ...oneShot(T + 1_000), spread: { jitterMs: 1_000 } }, now))).toBeUndefined();
    expect(await refusal(service.admit(m, NO_QUOTA, { ...oneShot(T + 4_000), spread: { jitterMs: 1_000 } }, now))).toMatch(/no offset within jitterMs \(1000 ms\) fits/);
  });
});

describe('QuotaService admission against maxFiresPerMinute', () => {
  const config = ApiConfig.load({ TIMER_CAPACITY_FIRES_PER_SEC: '0' });
  const quota: Quota = { ...NO_QUOTA, maxFiresPerMinute: 3 };

  it('a timer with a few fires reads only the minutes they land in; none in the prepared windows reads nothing', async () => {
    const calls: { buckets?: readonly number[] }[] = [];
    const repo = {
      pendingHistogram: jest.fn(async (o: { buckets?: readonly number[] }) => {
        calls.push(o);
        return new Map([[T + 60_000, 3]]);
      }),
    } as unknown as QuotaRepository;
    const service = new QuotaService(config, { now: () => T }, {} as DataSource, repo);
    const hourly = { app: 'a', spec: { cron: '0 5 * * * *', timeZone: 'UTC' }, writesFires: false };
    await service.admit(m, quota, hourly, T);
    expect(calls[0].buckets).toEqual([T + 5 * 60_000, T + 65 * 60_000, T + 125 * 60_000]);
    const refused = await service.admit(m, quota, { ...hourly, spec: { runAt: T + 61_000, timeZone: 'UTC' } }, T).then(() => undefined, (e: ApiError) => e.message);
    expect(refused).toBe(`quota maxFiresPerMinute of app a is 3; its busiest coming minute (${new Date(T + 60_000).toISOString()}) would have 4 fires (3 scheduled + 1 of this timer)`);
    const before = calls.length;
    await service.admit(m, quota, { ...hourly, spec: { cron: '0 0 3 * * *', timeZone: 'UTC' } }, T);
    expect(calls.length).toBe(before);
  });

  it('a timer with many fires reads the whole range', async () => {
    const repo = { pendingHistogram: jest.fn(async () => new Map()) } as unknown as QuotaRepository;
    const service = new QuotaService(config, { now: () => T }, {} as DataSource, repo);
    await service.admit(m, { ...quota, maxFiresPerMinute: 100 }, { app: 'a', spec: { cron: '0 * * * * *', timeZone: 'UTC' }, writesFires: false }, T);
    expect((repo.pendingHistogram as jest.Mock).mock.calls[0][0].buckets).toBeUndefined();
  });
});

describe('QuotaService.admitBatch (POST def/batch)', () => {
  const oneShot = (runAt: number, writesFires: boolean) => ({ app: 'a', spec: { runAt, timeZone: 'UTC' }, writesFires });
  const serviceOf = (stored: FireHistogram, capacity: number) => {
    const repo = { pendingHistogram: jest.fn(async () => new Map(stored)) } as unknown as QuotaRepository;
    return { repo, service: new QuotaService(ApiConfig.load({ TIMER_CAPACITY_FIRES_PER_SEC: String(capacity) }), { now: () => T }, {} as DataSource, repo) };
  };
  const refusal = async (p: Promise<unknown>) => (await p.then(() => undefined, (e: ApiError) => e))?.message;

  it('counts the batch\'s fires together over a second: a create\'s fires are seen by the items after it, the refusal names the item', async () => {
    const { service } = serviceOf(new Map([[T + 2_000, 1]]), 3);
    // 1 stored + 2 of the batch fit; the third item makes 4.
    expect(await refusal(service.admitBatch(m, NO_QUOTA, [oneShot(T + 2_000, false), oneShot(T + 2_000, false), oneShot(T + 2_000, false)], T))).toBe(
      `timers[2]: admission: the second ${new Date(T + 2_000).toISOString()} would have 4 fires (3 scheduled + 1 of this timer), over the capacity of 3 fires/s (TIMER_CAPACITY_FIRES_PER_SEC)`,
    );
    // autoSpread moves the later item instead, within its jitter.
    const spread = { ...oneShot(T + 2_000, false), spread: { jitterMs: 2_000 } };
    expect(await service.admitBatch(m, NO_QUOTA, [oneShot(T + 2_000, false), oneShot(T + 2_000, false), spread], T)).toEqual([null, null, 1_000]);
  });

  it('counts an enabled batch\'s fires into the reused load only when every item passed: a refusal part-way counts none', async () => {
    const { service, repo } = serviceOf(new Map([[T + 2_000, 1]]), 3);
    // Items 0 and 1 fit (1 + 2), item 2 does not: the batch is refused.
    expect(await refusal(service.admitBatch(m, NO_QUOTA, [oneShot(T + 2_000, true), oneShot(T + 2_000, true), oneShot(T + 2_000, true)], T))).toMatch(/^timers\[2\]: admission/);
    // The same two again pass: the refused batch left nothing counted (the load read is reused, not re-read).
    expect(await service.admitBatch(m, NO_QUOTA, [oneShot(T + 2_000, true), oneShot(T + 2_000, true)], T)).toEqual([null, null]);
    // Now they are counted: one more enable of that second is refused.
    expect(await refusal(service.admitBatch(m, NO_QUOTA, [oneShot(T + 2_000, true)], T))).toMatch(/^timers\[0\]: admission: the second .* would have 4 fires/);
    expect((repo.pendingHistogram as jest.Mock).mock.calls).toHaveLength(1);
  });

  it('checks maxFiresPerMinute once over the batch\'s fires together, reading only their minutes', async () => {
    const { service, repo } = serviceOf(new Map([[T, 1]]), 0);
    const quota: Quota = { ...NO_QUOTA, maxFiresPerMinute: 2 };
    expect(await service.admitBatch(m, quota, [oneShot(T + 5_000, true)], T)).toEqual([null]);
    expect(await refusal(service.admitBatch(m, quota, [oneShot(T + 5_000, true), oneShot(T + 6_000, true)], T))).toBe(
      `quota maxFiresPerMinute of app a is 2; its busiest coming minute (${new Date(T).toISOString()}) would have 3 fires (1 scheduled + 2 of the 2 timers of this batch)`,
    );
    const reads = (repo.pendingHistogram as jest.Mock).mock.calls;
    expect(reads).toHaveLength(2);
    expect(reads[1][0]).toMatchObject({ app: 'a', bucketMs: 60_000, buckets: [T] });
  });

  it('names the item a minIntervalMs refusal is about', async () => {
    const { service } = serviceOf(new Map(), 0);
    const quota: Quota = { ...NO_QUOTA, minIntervalMs: 2_000 };
    expect(await refusal(service.admitBatch(m, quota, [oneShot(T + 5_000, true), { app: 'a', spec: { every: 1_000, startAt: T, timeZone: 'UTC' }, writesFires: true }], T))).toMatch(
      /^timers\[1\]: quota minIntervalMs of app a is 2000 ms; this schedule fires 1000 ms apart/,
    );
  });
});

describe('QuotaService maxFiresPerMinute of a frequent schedule', () => {
  const everySecond = { app: 'a', spec: { cron: '* * * * * *', timeZone: 'UTC' }, writesFires: true };
  const scans: string[] = [];
  const repo = {
    pendingHistogram: jest.fn(async (o: { app?: string; bucketMs: number }) => {
      if (o.app !== undefined && o.bucketMs === 60_000) scans.push(o.app);
      return new Map([[T + 60_000, 100]]);
    }),
  } as unknown as QuotaRepository;
  const service = new QuotaService(ApiConfig.load({ TIMER_CAPACITY_FIRES_PER_SEC: '0' }), { now: () => T }, {} as DataSource, repo);
  beforeEach(() => (scans.length = 0));

  it("reads no open fires while the app's live timers cannot fill any minute, and reads them (and refuses) once they could", async () => {
    const quota = (liveTimers: number): Quota => ({ maxTimers: 0, maxFiresPerMinute: 150, minIntervalMs: 0, liveTimers });
    await service.admit(m, quota(1), everySecond, T); // (1 + 1) x 61 <= 150: no minute can go over
    expect(scans).toEqual([]);
    await expect(service.admit(m, quota(2), everySecond, T)).rejects.toThrow(/maxFiresPerMinute of app a is 150; its busiest coming minute .* would have 160 fires/);
    expect(scans).toEqual(['a']);
    // Unknown live timers (no counter): always read.
    await expect(service.admit(m, { maxTimers: 0, maxFiresPerMinute: 150, minIntervalMs: 0 }, everySecond, T)).rejects.toThrow(/maxFiresPerMinute/);
    expect(scans).toEqual(['a', 'a']);
  });
});
