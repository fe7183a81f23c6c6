import { FireOverview, OverviewRepository } from '@timer/dal';
import { ApiError } from '../common/errors';
import { OverviewService } from './overview.service';

const NOW = Date.UTC(2030, 0, 1, 10, 0, 30);
const MIN = 60_000;

describe('OverviewService', () => {
  let reads: { app?: string; fromMs: number; toMs: number; bucketMs: number }[];
  let service: OverviewService;

  beforeEach(() => {
    reads = [];
    const fires: FireOverview = {
      buckets: [{ start: NOW - 30_000 - MIN, fires: 120, delivered: 100, failed: 10, missed: 5, open: 5, latenessP50Ms: 12, latenessP99Ms: 80 }],
      latenessP50Ms: 12,
      latenessP99Ms: 80,
      latenessFires: 100,
      latenessCapped: false,
    };
    const repo = {
      fires: jest.fn(async (o: { app?: string; fromMs: number; toMs: number; bucketMs: number }) => {
        reads.push(o);
        return fires;
      }),
      backlog: jest.fn(async () => ({ pending: 2, capped: false, oldestRunAt: NOW - 5_000 })),
    } as unknown as OverviewRepository;
    service = new OverviewService(repo, { now: () => NOW });
  });

  const refusal = async (p: Promise<unknown>) => (await p.then(() => undefined, (e: ApiError) => e))?.message;

  it('fills every bucket of the last hour, empty ones with zeros, and the last one ends at now', async () => {
    const d = await service.get({ kind: 'admin' }, {});
    expect(reads).toEqual([{ app: undefined, fromMs: NOW - 30_000 - 60 * MIN, toMs: NOW, bucketMs: MIN, latenessLimit: 200_000 }]);
    expect(d.buckets).toHaveLength(61);
    expect(d.buckets[59]).toMatchObject({ fires: 120, firesPerSecond: 2, delivered: 100, latenessP99Ms: 80 });
    expect(d.buckets[0]).toMatchObject({ fires: 0, firesPerSecond: 0, latenessP50Ms: null });
    expect(d.buckets[60]).toMatchObject({ start: NOW - 30_000, end: NOW });
    expect(d.totals).toMatchObject({ fires: 120, delivered: 100, failed: 10, missed: 5, open: 5, firesPerSecond: 0.033 });
    expect(d.backlog.pending).toBe(2);
  });

  it("reads an app token's own app, refuses another's, and the admin's named app", async () => {
    expect((await service.get({ kind: 'app', app: 'a' }, {})).app).toBe('a');
    expect(await refusal(service.get({ kind: 'app', app: 'a' }, { app: 'b' }))).toMatch(/may not act on app b/);
    expect((await service.get({ kind: 'admin' }, { app: 'b' })).app).toBe('b');
    expect(reads.map((r) => r.app)).toEqual(['a', 'b']);
  });

  it('refuses an empty or reversed range, more than 24 hours, or more than 3600 buckets, naming the fields', async () => {
    expect(await refusal(service.get({ kind: 'admin' }, { from: NOW, to: NOW }))).toBe('from must be before to');
    expect(await refusal(service.get({ kind: 'admin' }, { from: NOW - 25 * 60 * MIN }))).toMatch(/^from\.\.to spans more than 24 hours/);
    expect(await refusal(service.get({ kind: 'admin' }, { bucketMs: 1_000, from: NOW - 2 * 60 * MIN }))).toMatch(/^bucketMs 1000 cuts from\.\.to into 7200 buckets/);
    expect(reads).toEqual([]);
  });
});
