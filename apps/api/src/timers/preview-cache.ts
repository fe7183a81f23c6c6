import { nextFireTimes, ScheduleSpec } from '@timer/schedule';

const MAX_ENTRIES = 10_000;

/**
 * Next fire times for `GET /api/timer/v1/def`. A timer's schedule never changes (the seed allows no
 * update: delete and recreate), so times computed once stay right: an entry holds the first
 * `2 x count` fires after the instant it was computed at, and serves any later "now" while at least
 * `count` of them remain (or the schedule has no more). Evaluating a cron in a zone costs a few
 * hundred microseconds, most of a GET without this.
 */
export class PreviewCache {
  private readonly entries = new Map<string, { from: number; times: number[] }>();

  next(timerId: string, spec: ScheduleSpec, now: number, count: number): number[] {
    if (count <= 0) return [];
    const key = `${timerId}|${spec.cron ?? ''}|${spec.runAt ?? ''}|${spec.every ?? ''}|${spec.timeZone}|${spec.startAt ?? ''}|${spec.endAt ?? ''}|${spec.finalAt ?? ''}|${spec.dstGap ?? ''}|${spec.dstOverlap ?? ''}`;
    const cached = this.entries.get(key);
    if (cached && now >= cached.from) {
      const upcoming = cached.times.filter((t) => t > now);
      if (upcoming.length >= count || cached.times.length < 2 * count) return upcoming.slice(0, count);
    }
    const times = nextFireTimes(spec, now, 2 * count);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { from: now, times });
    return times.slice(0, count);
  }
}
