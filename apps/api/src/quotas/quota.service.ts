import { Inject, Injectable } from '@nestjs/common';
import { MINUTE_MS, preparedWindows } from '@timer/contracts';
import { FireHistogram, QuotaRepository, runInTransaction, StoredQuota } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { fireTimesBetween, nextFireTimes, ScheduleSpec } from '@timer/schedule';
import { DataSource, EntityManager } from 'typeorm';
import { assertAdmin, assertAppAccess, isAdmin, Principal } from '../auth/principal';
import { ApiError, badRequest, ErrorCode, notFound } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { atItem, atItemAsync } from '../timers/batch-items';
import {
  BucketLoad,
  Loads,
  busiestWith,
  histogramOf,
  leastLoadedOffset,
  MAX_FIRES_PER_SECOND_PER_TIMER,
  MAX_OPEN_FIRES_PER_MINUTE_PER_TIMER,
  maxFiresPerMinuteBound,
  minGapBound,
  peakOf,
  smallestGap,
  SpreadChoice,
  spreadOffsets,
} from './admission';
import { LoadQuery, LoadView, PutQuotaDto, QuotaValues, QuotaView } from './dto/quota.dto';

/** The quotas in force for an app: its own, else the configured defaults (0 = no limit); with its live timers when read. */
export type Quota = QuotaValues & { liveTimers?: number };

/** A definition asking to be admitted: its schedule, and the timer it replaces the fires of (edit, enable). */
export interface Candidate {
  app: string;
  spec: ScheduleSpec;
  /** The timer edited or enabled: its stored pending fires are not counted twice. */
  timerId?: string;
  /** Its fires are written now (enable, edit of an enabled timer), not just allowed (a create makes a disabled timer). */
  writesFires: boolean;
  /** `autoSpread` with this `jitterMs`: over the capacity, its fires may be moved within the jitter instead of refused. */
  spread?: { jitterMs: number };
  /**
   * The fire times this request writes (enable: the near future, TIMER_PRECREATE_SECONDS), counted into
   * this process's load; the migrator's rows count for the rest once the load is read again. Admission
   * itself evaluates the schedule over the prepared windows, and only where a cheap bound does not decide.
   */
  written?: number[];
}

/** All apps' projected load as last read. */
interface GlobalLoad {
  readAt: number;
  until: number;
  perSecond: FireHistogram;
  /** The busiest second's fires, kept up to date as admitted fires are added (not a scan of the map per admission). */
  peak: number;
}

/** Widest `GET /api/app/v1/load` range (one hour of seconds). */
export const LOAD_MAX_SPAN_MS = 3_600_000;
/** How long the all-apps per-second load is reused before it is read again from the task rows. */
export const GLOBAL_LOAD_TTL_MS = 5_000;
/** Fires of one candidate evaluated at most (a 1-second schedule over 3 x 24 h windows is 259,200). */
const MAX_CANDIDATE_FIRES = 300_000;

/**
 * Per-app quotas and admission by projected load (docs/behaviour.md, "Quotas and admission"). A write
 * that adds fires (edit, enable) calls {@link lock} in its transaction (the app's row lock serialises
 * the app's writes of fires, so two concurrent enables cannot both take the last place of a minute),
 * then {@link admit} with the definition. A create writes no fire: it calls {@link admit} before its
 * transaction, without the lock, and {@link countCreate} as its last statement (maxTimers). The projected load is read from the pending task rows of the
 * prepared windows (MySQL is the source of truth: nothing to keep in step on the write paths).
 */
@Injectable()
export class QuotaService {
  private globalLoad?: GlobalLoad;

  constructor(
    private readonly config: ApiConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly dataSource: DataSource,
    private readonly quotas: QuotaRepository,
  ) {}

  /** Locks the app's row until the transaction ends and returns its quotas in force (the defaults when the app has no row). */
  async lock(m: EntityManager, app: string): Promise<Quota> {
    return this.effective(await this.quotas.lockApp(app, m));
  }

  /**
   * The app's quotas in force, read without a lock: what a create is admitted with. Its checks need no
   * lock because a create writes no fire (its timer is disabled), so concurrent creates cannot push
   * each other over a minute or a second; an enable checks the fires again under the app's lock.
   */
  async current(app: string): Promise<Quota> {
    return this.effective(await this.quotas.find(app));
  }

  /**
   * A create's part under the app's row lock, its last statement before the commit (the lock is held
   * for this round trip and the commit only): counts the new timer in the app's live timers when the
   * app is under maxTimers, in one conditional UPDATE; else 403 (the caller's transaction rolls back,
   * nothing written). Concurrent creates pass one at a time, each seeing the counts committed before.
   */
  async countCreate(m: EntityManager, app: string, added = 1): Promise<void> {
    if (await this.quotas.tryAddLiveTimer(app, this.config.quotaDefaults.maxTimers, m, added)) return;
    // At maxTimers, or no app row (no counter: the count). Read under the lock for the answer's figures.
    const locked = await this.quotas.lockAppAdding(app, m, added);
    const quota = this.effective(locked?.quota ?? null);
    if (quota.maxTimers === 0) return;
    // Both counts include the new timers (the counter was just added to; the COUNT sees their inserted rows).
    const timers = (locked?.liveTimers ?? (await this.quotas.liveTimers(app, m))) - added;
    if (timers + added > quota.maxTimers) {
      const adds = added === 1 ? '' : ` and this batch adds ${added}`;
      throw new ApiError(403, ErrorCode.QUOTA_EXCEEDED, `quota maxTimers of app ${app} is ${quota.maxTimers}; the app has ${timers} timers${adds}: delete one or ask for a larger quota`);
    }
  }

  /** A delete's part, its last statement (timer row before app row): the app has one live timer fewer. */
  async timerRemoved(m: EntityManager, app: string): Promise<void> {
    await this.quotas.removeLiveTimer(app, m);
  }

  /**
   * Refuses, with nothing written (the caller's transaction rolls back), a definition over a quota or
   * the capacity (maxTimers is {@link countCreate}'s): the smallest gap under minIntervalMs (403), the app's busiest
   * coming minute over maxFiresPerMinute (429), a coming second over TIMER_CAPACITY_FIRES_PER_SEC (429).
   * The load counts the timer as if enabled: a disabled timer is one enable away from it.
   * Returns the spread offset to store: for an autoSpread candidate 0 when it fits as it is, else the
   * least-loaded offset within its jitter that fits (429 when none does); null without autoSpread.
   */
  async admit(m: EntityManager | undefined, quota: Quota, c: Candidate, now: number): Promise<number | null> {
    checkMinInterval(quota, c, now);
    const capacity = this.config.capacityFiresPerSec;
    if (quota.maxFiresPerMinute === 0 && capacity === 0) return c.spread ? 0 : null;
    const until = preparedWindows(now, this.config.windowMs).until;
    let fires: number[] | undefined;
    const firesOf = () => (fires ??= fireTimesBetween(c.spec, now, until, MAX_CANDIDATE_FIRES));
    if (quota.maxFiresPerMinute > 0) {
      const few = fewFires(c.spec, now, until);
      if (few) {
        // A typical timer (hourly, daily, one-shot): only the minutes its fires land in can go over, so only
        // they are read (a scan of every pending fire of the app, under its lock, grew with the app).
        fires = few;
        const added = histogramOf(few, MINUTE_MS);
        const existing = added.size === 0 ? new Map<number, number>() : await this.quotas.pendingHistogram({ app: c.app, fromMs: now, toMs: until, bucketMs: MINUTE_MS, exceptTimerId: c.timerId, buckets: [...added.keys()] }, m);
        const busiest = busiestWith(existing, added);
        if (busiest && busiest.total > quota.maxFiresPerMinute) throw overMinuteQuota(c.app, quota.maxFiresPerMinute, busiest);
      } else if (!fitsAnyMinute(quota, 1)) {
        const existing = await this.quotas.pendingHistogram({ app: c.app, fromMs: now, toMs: until, bucketMs: MINUTE_MS, exceptTimerId: c.timerId }, m);
        // Cheap first: the busiest minute plus the most this schedule can add to any minute.
        if ((peakOf(existing)?.fires ?? 0) + maxFiresPerMinuteBound(c.spec) > quota.maxFiresPerMinute) {
          const busiest = busiestWith(existing, histogramOf(firesOf(), MINUTE_MS));
          if (busiest && busiest.total > quota.maxFiresPerMinute) throw overMinuteQuota(c.app, quota.maxFiresPerMinute, busiest);
        }
      }
    }
    if (capacity === 0) return c.spread ? 0 : null;
    const global = await this.globalPerSecond(now, until);
    const own = async () => (c.timerId === undefined ? new Map<number, number>() : this.quotas.pendingHistogram({ timerId: c.timerId, fromMs: now, toMs: until, bucketMs: 1_000 }, m));
    const offset = await this.admitSecond(global.perSecond, global.peak, c, firesOf, own, capacity);
    if (c.writesFires) countAdmitted(global, c.written ?? firesOf(), offset ?? 0);
    return offset;
  }

  /**
   * The admission of a batch of new timers of one app (POST def/batch), with one read of the app's load:
   * each candidate's minIntervalMs, then the batch's fires together over the app's busiest coming minute,
   * then each candidate's seconds over the capacity, in order, each counting the ones before it (with its
   * spread offset). A refusal of one candidate names it (`timers[i]...`, see {@link atItem}). Returns the
   * spread offsets in order, as {@link admit} does; the fires of candidates that write them (enable) are
   * counted into this process's load as {@link admit} counts them.
   */
  async admitBatch(m: EntityManager | undefined, quota: Quota, cs: Candidate[], now: number): Promise<(number | null)[]> {
    cs.forEach((c, i) => atItem(i, () => checkMinInterval(quota, c, now)));
    const capacity = this.config.capacityFiresPerSec;
    if ((quota.maxFiresPerMinute === 0 && capacity === 0) || cs.length === 0) return cs.map((c) => (c.spread ? 0 : null));
    const until = preparedWindows(now, this.config.windowMs).until;
    // A typical timer's few fires are evaluated at once; a frequent one's only when a bound does not decide.
    const few = cs.map((c) => fewFires(c.spec, now, until));
    const all: (number[] | undefined)[] = cs.map(() => undefined);
    const firesOf = (i: number) => (all[i] ??= few[i] ?? fireTimesBetween(cs[i].spec, now, until, MAX_CANDIDATE_FIRES));
    if (quota.maxFiresPerMinute > 0) {
      const app = cs[0].app;
      if (few.every((f) => f !== undefined)) {
        // Typical timers: only the minutes they land in are read, as for one timer.
        const added = histogramOf(few.flat() as number[], MINUTE_MS);
        const existing = added.size === 0 ? new Map<number, number>() : await this.quotas.pendingHistogram({ app, fromMs: now, toMs: until, bucketMs: MINUTE_MS, buckets: [...added.keys()] }, m);
        const busiest = busiestWith(existing, added);
        if (busiest && busiest.total > quota.maxFiresPerMinute) throw overMinuteQuota(app, quota.maxFiresPerMinute, busiest, `of the ${cs.length} timers of this batch`);
      } else if (!fitsAnyMinute(quota, cs.length)) {
        const existing = await this.quotas.pendingHistogram({ app, fromMs: now, toMs: until, bucketMs: MINUTE_MS }, m);
        const bound = cs.reduce((n, c, i) => n + (few[i] ? few[i]!.length : maxFiresPerMinuteBound(c.spec)), 0);
        if ((peakOf(existing)?.fires ?? 0) + bound > quota.maxFiresPerMinute) {
          const busiest = busiestWith(existing, histogramOf(cs.flatMap((_, i) => firesOf(i)), MINUTE_MS));
          if (busiest && busiest.total > quota.maxFiresPerMinute) throw overMinuteQuota(app, quota.maxFiresPerMinute, busiest, `of the ${cs.length} timers of this batch`);
        }
      }
    }
    if (capacity === 0) return cs.map((c) => (c.spread ? 0 : null));
    const global = await this.globalPerSecond(now, until);
    // The batch's fires, seen by the candidates after them (those known without evaluating a frequent
    // schedule: its few fires, or the ones the request writes); counted into the process's load (enables
    // only) once every candidate passed: a refusal part-way must not leave the earlier items' fires counted
    // for the load's reuse (GLOBAL_LOAD_TTL_MS), where they would refuse other requests for nothing.
    const known = cs.map((c, i) => all[i] ?? few[i] ?? c.written ?? []);
    const batch = new Map<number, number>();
    let batchPeak = 0;
    const load: Loads = { get: (at) => (global.perSecond.get(at) ?? 0) + (batch.get(at) ?? 0) };
    const none = async () => new Map<number, number>();
    const offsets: (number | null)[] = [];
    for (const [i, c] of cs.entries()) {
      const offset = await atItemAsync(i, () => this.admitSecond(load, global.peak + batchPeak, c, () => firesOf(i), none, capacity));
      for (const [at, n] of histogramOf(all[i] ?? known[i], 1_000)) {
        const v = (batch.get(at + (offset ?? 0)) ?? 0) + n;
        batch.set(at + (offset ?? 0), v);
        batchPeak = Math.max(batchPeak, v);
      }
      offsets.push(offset);
    }
    cs.forEach((c, i) => c.writesFires && countAdmitted(global, c.written ?? firesOf(i), offsets[i] ?? 0));
    return offsets;
  }

  /**
   * One candidate against the capacity over `load` (`peak` at least its busiest second): for autoSpread
   * 0 when it fits as it is, else the least-loaded offset within its jitter that fits; 429 when nothing fits.
   * `own`: the candidate's stored fires (an edit or enable replaces them), read only when the cheap bound does not decide.
   */
  private async admitSecond(load: Loads, peak: number, c: Candidate, firesOf: () => number[], own: () => Promise<ReadonlyMap<number, number>>, capacity: number): Promise<number | null> {
    let offsetMs = 0;
    // Cheap first: the busiest second plus the one fire this timer can add to a second.
    if (peak + MAX_FIRES_PER_SECOND_PER_TIMER > capacity) {
      const stored = await own();
      const added = histogramOf(firesOf(), 1_000);
      const busiest = busiestWith(load, added, stored);
      if (busiest && busiest.total > capacity) {
        const spread = c.spread ? leastLoadedOffset(load, added, stored, spreadOffsets(c.spread.jitterMs)) : null;
        if (!spread || (spread.busiest?.total ?? 0) > capacity) throw overCapacity(busiest, capacity, c.spread, spread);
        offsetMs = spread.offsetMs;
      }
    }
    return c.spread ? offsetMs : null;
  }

  /** `PUT /api/app/v1/quota` (admin): the app's quotas; a field left out or null is the default. */
  async put(p: Principal, dto: PutQuotaDto): Promise<QuotaView> {
    assertAdmin(p, 'setting a quota');
    const stored: StoredQuota = { maxTimers: dto.maxTimers ?? null, maxFiresPerMinute: dto.maxFiresPerMinute ?? null, minIntervalMs: dto.minIntervalMs ?? null };
    await runInTransaction(this.dataSource, async (m) => {
      if (!(await this.quotas.lockApp(dto.app, m))) throw notFound(`app ${dto.app} not found`);
      await this.quotas.set(dto.app, stored, m);
    });
    return this.get(p, dto.app);
  }

  /** `GET /api/app/v1/quota`: the quotas in force, what was set, and the usage they are checked against. */
  async get(p: Principal, app: string): Promise<QuotaView> {
    assertAppAccess(p, app);
    const stored = await this.quotas.find(app);
    if (!stored) throw notFound(`app ${app} not found`);
    const now = this.clock.now();
    const until = preparedWindows(now, this.config.windowMs).until;
    const perMinute = await this.quotas.pendingHistogram({ app, fromMs: now, toMs: until, bucketMs: MINUTE_MS });
    const peak = peakOf(perMinute);
    const { liveTimers: _timers, ...quota } = this.effective(stored);
    return {
      app,
      quota,
      set: { maxTimers: stored.maxTimers, maxFiresPerMinute: stored.maxFiresPerMinute, minIntervalMs: stored.minIntervalMs },
      usage: { timers: await this.quotas.liveTimers(app), firesPerMinute: peak?.fires ?? 0, busiestMinute: peak ? peak.at : null, until },
    };
  }

  /** `GET /api/app/v1/load`: pending fires per second in [from, to) of the app (an app token, or an admin naming it) or of all apps. */
  async load(p: Principal, q: LoadQuery): Promise<LoadView> {
    if (q.app !== undefined) assertAppAccess(p, q.app);
    const app = q.app ?? (isAdmin(p) ? undefined : (p as { app: string }).app);
    const now = this.clock.now();
    const from = Math.floor((q.from ?? now) / 1000) * 1000;
    const to = Math.ceil((q.to ?? from + MINUTE_MS) / 1000) * 1000;
    if (to <= from) throw badRequest('to must be after from');
    if (to - from > LOAD_MAX_SPAN_MS) throw badRequest(`to: the range [from, to) is at most ${LOAD_MAX_SPAN_MS / 1000} s (got ${(to - from) / 1000} s)`);
    const h = await this.quotas.pendingHistogram({ app, fromMs: from, toMs: to, bucketMs: 1_000 });
    const perSecond = Array.from({ length: (to - from) / 1000 }, (_, i) => h.get(from + i * 1000) ?? 0);
    return { app: app ?? null, from, to, capacityPerSec: this.config.capacityFiresPerSec, peak: peakOf(h), perSecond };
  }

  /**
   * All apps' pending fires per second in [now, until), read again after {@link GLOBAL_LOAD_TTL_MS}
   * (one covering-index scan); the fires this process writes meanwhile are added to it by {@link admit}.
   */
  private async globalPerSecond(now: number, until: number): Promise<GlobalLoad> {
    const g = this.globalLoad;
    if (g && now >= g.readAt && now - g.readAt < GLOBAL_LOAD_TTL_MS && until <= g.until) return g;
    const perSecond = await this.quotas.pendingHistogram({ fromMs: now, toMs: until, bucketMs: 1_000 });
    this.globalLoad = { readAt: now, until, perSecond, peak: peakOf(perSecond)?.fires ?? 0 };
    return this.globalLoad;
  }

  private effective(stored: StoredQuota | null): Quota {
    const d = this.config.quotaDefaults;
    return {
      maxTimers: stored?.maxTimers ?? d.maxTimers,
      maxFiresPerMinute: stored?.maxFiresPerMinute ?? d.maxFiresPerMinute,
      minIntervalMs: stored?.minIntervalMs ?? d.minIntervalMs,
      ...(stored?.liveTimers != null ? { liveTimers: stored.liveTimers } : {}),
    };
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A minIntervalMs refusal (403) of a schedule whose fires come closer than the app's quota. */
function checkMinInterval(quota: Quota, c: Candidate, now: number): void {
  if (quota.minIntervalMs === 0 || minGapBound(c.spec) >= quota.minIntervalMs) return;
  const gap = smallestGap(c.spec, now);
  if (gap && gap.gapMs < quota.minIntervalMs) {
    throw new ApiError(403, ErrorCode.QUOTA_EXCEEDED, `quota minIntervalMs of app ${c.app} is ${quota.minIntervalMs} ms; this schedule fires ${gap.gapMs} ms apart (at ${iso(gap.at)})`);
  }
}

/**
 * Whether no minute can go over maxFiresPerMinute whatever the schedules: every live timer of the app
 * (and `added` more) at its most fires a minute. Spares the scan of the app's open fires that a frequent
 * schedule otherwise needs (it grows with the app's fires, not with the request).
 */
function fitsAnyMinute(quota: Quota, added: number): boolean {
  return quota.liveTimers !== undefined && (quota.liveTimers + added) * MAX_OPEN_FIRES_PER_MINUTE_PER_TIMER <= quota.maxFiresPerMinute;
}

/** Counts admitted fires into this process's load where they are delivered, so its next admissions see them before the load is read again. */
function countAdmitted(global: GlobalLoad, fires: readonly number[], offsetMs: number): void {
  for (const [at, n] of histogramOf(fires, 1_000)) {
    const v = (global.perSecond.get(at + offsetMs) ?? 0) + n;
    global.perSecond.set(at + offsetMs, v);
    if (v > global.peak) global.peak = v;
  }
}

/** Fires of one candidate up to which admission reads only the minutes they land in. */
export const FEW_FIRES = 32;

/** The candidate's fire times in [now, until) when there are at most {@link FEW_FIRES}; undefined when more. */
function fewFires(spec: ScheduleSpec, now: number, until: number): number[] | undefined {
  const next = nextFireTimes(spec, now - 1, FEW_FIRES + 1);
  const before = next.filter((t) => t < until);
  return before.length > FEW_FIRES ? undefined : before;
}

function overMinuteQuota(app: string, max: number, busiest: BucketLoad, of = 'of this timer'): ApiError {
  return new ApiError(
    429,
    ErrorCode.QUOTA_RATE_EXCEEDED,
    `quota maxFiresPerMinute of app ${app} is ${max}; its busiest coming minute (${iso(busiest.at)}) would have ${busiest.total} fires ` +
      `(${busiest.existing} scheduled + ${busiest.added} ${of})`,
  );
}

/** The 429 of a second over the capacity; for autoSpread, with the least-loaded offset that still did not fit. */
function overCapacity(busiest: BucketLoad, capacity: number, spread: { jitterMs: number } | undefined, best: SpreadChoice | null): ApiError {
  const tried =
    spread && best?.busiest
      ? `; autoSpread: no offset within jitterMs (${spread.jitterMs} ms) fits, the least loaded (+${best.offsetMs} ms) would put ${best.busiest.total} fires on the second ${iso(best.busiest.at)}`
      : '';
  return new ApiError(
    429,
    ErrorCode.OVER_CAPACITY,
    `admission: the second ${iso(busiest.at)} would have ${busiest.total} fires (${busiest.existing} scheduled + ${busiest.added} of this timer), ` +
      `over the capacity of ${capacity} fires/s (TIMER_CAPACITY_FIRES_PER_SEC)${tried}`,
  );
}
