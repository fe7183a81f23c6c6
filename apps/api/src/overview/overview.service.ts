import { Inject, Injectable } from '@nestjs/common';
import { FireBucket, OverviewRepository } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { assertAppAccess, isAdmin, Principal } from '../auth/principal';
import { badRequest } from '../common/errors';
import { OVERVIEW_BUCKET_DEFAULT_MS, OverviewQuery } from './dto/overview.query';
import { OverviewBucketView, OverviewData } from './dto/overview.view';

const HOUR_MS = 3_600_000;
/** The widest [from, to) one request reads. */
export const OVERVIEW_MAX_RANGE_MS = 24 * HOUR_MS;
/** The most buckets one answer holds (an hour of seconds, a day of 24 s). */
export const OVERVIEW_MAX_BUCKETS = 3_600;
/** Delivered fires the lateness percentiles are taken over at most (the latest of the range). */
export const OVERVIEW_LATENESS_ROWS = 200_000;
/** The backlog is counted up to this. */
export const OVERVIEW_BACKLOG_CAP = 100_000;

const perSecond = (fires: number, ms: number) => Math.round((fires / (ms / 1000)) * 1000) / 1000;

/**
 * The service's own view of its recent work (no Prometheus): fires per bucket of run_at by outcome,
 * lateness percentiles of the delivered ones and the backlog, read from the task rows, the ledger.
 */
@Injectable()
export class OverviewService {
  constructor(
    private readonly overview: OverviewRepository,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  async get(p: Principal, q: OverviewQuery): Promise<OverviewData> {
    if (q.app !== undefined) assertAppAccess(p, q.app);
    const app = q.app ?? (isAdmin(p) ? undefined : (p as { app: string }).app);
    const now = this.clock.now();
    const bucketMs = q.bucketMs ?? OVERVIEW_BUCKET_DEFAULT_MS;
    const to = q.to ?? now;
    const asked = q.from ?? Math.max(0, to - HOUR_MS);
    if (asked >= to) throw badRequest('from must be before to');
    if (to - asked > OVERVIEW_MAX_RANGE_MS) throw badRequest(`from..to spans more than 24 hours (${Math.ceil((to - asked) / HOUR_MS)} hours): ask for a shorter range`);
    const from = Math.floor(asked / bucketMs) * bucketMs;
    const count = Math.ceil((to - from) / bucketMs);
    if (count > OVERVIEW_MAX_BUCKETS) throw badRequest(`bucketMs ${bucketMs} cuts from..to into ${count} buckets, more than ${OVERVIEW_MAX_BUCKETS}: ask for a larger bucketMs or a shorter range`);

    const [fires, backlog] = await Promise.all([
      this.overview.fires({ app, fromMs: from, toMs: to, bucketMs, latenessLimit: OVERVIEW_LATENESS_ROWS }),
      this.overview.backlog({ app, nowMs: now, cap: OVERVIEW_BACKLOG_CAP }),
    ]);
    const byStart = new Map(fires.buckets.map((b) => [b.start, b]));
    const buckets = Array.from({ length: count }, (_, i) => bucketView(from + i * bucketMs, Math.min(to, from + (i + 1) * bucketMs), byStart.get(from + i * bucketMs)));
    const sum = (k: 'fires' | 'delivered' | 'failed' | 'missed' | 'open') => buckets.reduce((s, b) => s + b[k], 0);
    return {
      app: app ?? null,
      from,
      to,
      bucketMs,
      now,
      totals: {
        fires: sum('fires'),
        firesPerSecond: perSecond(sum('fires'), to - from),
        delivered: sum('delivered'),
        failed: sum('failed'),
        missed: sum('missed'),
        open: sum('open'),
        latenessP50Ms: fires.latenessP50Ms,
        latenessP99Ms: fires.latenessP99Ms,
        latenessFires: fires.latenessFires,
        latenessCapped: fires.latenessCapped,
      },
      buckets,
      backlog,
    };
  }
}

function bucketView(start: number, end: number, b: FireBucket | undefined): OverviewBucketView {
  const fires = b?.fires ?? 0;
  return {
    start,
    end,
    fires,
    firesPerSecond: perSecond(fires, end - start),
    delivered: b?.delivered ?? 0,
    failed: b?.failed ?? 0,
    missed: b?.missed ?? 0,
    open: b?.open ?? 0,
    latenessP50Ms: b?.latenessP50Ms ?? null,
    latenessP99Ms: b?.latenessP99Ms ?? null,
  };
}
