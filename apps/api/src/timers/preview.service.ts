import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CLOCK, NowClock } from '@timer/platform';
import { BusinessCalendar, parseInterval, PreviewFire, previewFireTimes, ScheduleSpec, warmUpSchedules, ZoneClock } from '@timer/schedule';
import { assertAppAccess, Principal } from '../auth/principal';
import { badRequest } from '../common/errors';
import { CalendarResolver } from './calendar-resolver';
import { PreviewFireView, PreviewQuery, PreviewResult } from './dto/preview.query';
import { asBadRequest } from './timer-definition';

const DEFAULT_PREVIEW_COUNT = 10;

/** Fire times of a schedule that is not stored: what a create with these fields would fire. */
@Injectable()
export class PreviewService implements OnApplicationBootstrap {

  /** The first preview of a process would otherwise pay the schedule code's compilation (warmUpSchedules). */
  onApplicationBootstrap(): void {
    warmUpSchedules(this.clock.now());
  }

  constructor(
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly calendars: CalendarResolver,
  ) {}

  /** With `calendars`: the app's calendars applied (404-free: a name the app lacks is a 400 naming `calendars`). */
  async preview(p: Principal, q: PreviewQuery): Promise<PreviewResult> {
    if (!q.calendars?.length) return this.plain(q);
    if (q.app === undefined) throw badRequest('app: required with calendars (the app whose calendars they are)');
    assertAppAccess(p, q.app);
    const rules = (await this.calendars.resolve(q.app, q.calendars)) ?? [];
    const { spec, from, timeZone } = this.specOf(q);
    const calendar = new BusinessCalendar(rules, q.onExcluded ?? 'skip', timeZone);
    const clock = new ZoneClock(timeZone);
    const fires = asBadRequest(() => {
      try {
        return calendar.nextFires(spec, from - 1, q.count ?? DEFAULT_PREVIEW_COUNT);
      } catch (e) {
        // Whatever the schedule and calendars, a 400: the preview's input is the whole cause.
        if (e instanceof RangeError) throw badRequest(`calendars: the fires of this schedule with these calendars cannot be previewed (${e.message})`);
        throw e;
      }
    });
    return {
      timeZone,
      fires: fires.map((f) => ({
        ...fireView({ at: f.at, offset: clock.offsetAt(f.at) }),
        ...(f.calendar !== undefined ? { calendar: f.calendar } : {}),
        ...(f.excluded !== undefined ? { excluded: true } : {}),
        ...(f.movedFrom !== undefined ? { movedFrom: f.movedFrom } : {}),
      })),
    };
  }

  private plain(q: PreviewQuery): PreviewResult {
    const { spec, from, timeZone } = this.specOf(q);
    const fires = asBadRequest(() => previewFireTimes(spec, from - 1, q.count ?? DEFAULT_PREVIEW_COUNT));
    return { timeZone, fires: fires.map(fireView) };
  }

  private specOf(q: PreviewQuery): { spec: ScheduleSpec; from: number; timeZone: string } {
    const from = q.from ?? this.clock.now();
    const timeZone = q.timeZone ?? 'UTC';
    const spec: ScheduleSpec = { timeZone };
    if (q.cron != null) spec.cron = q.cron;
    if (q.runAt != null) spec.runAt = q.runAt;
    if (q.every != null) {
      spec.every = asBadRequest(() => parseInterval(q.every));
      // As a create would anchor it: at the instant of the write (here `from`), rounded up to the second.
      spec.startAt = q.startAt ?? Math.ceil(from / 1000) * 1000;
    } else if (q.startAt != null) spec.startAt = q.startAt;
    if (q.endAt != null) spec.endAt = q.endAt;
    if (q.dstGap != null) spec.dstGap = q.dstGap;
    if (q.dstOverlap != null) spec.dstOverlap = q.dstOverlap;
    return { spec, from, timeZone };
  }
}

function fireView(f: PreviewFire): PreviewFireView {
  const view: PreviewFireView = { at: f.at, utc: new Date(f.at).toISOString(), local: `${wallText(f.at + f.offset)}${offsetText(f.offset)}` };
  if (f.dst) view.dst = f.dst;
  if (f.wall !== undefined) view.nominal = wallText(f.wall);
  return view;
}

/** A wall time on the UTC-like axis as ISO 8601 without zone, milliseconds only when not zero. */
function wallText(wall: number): string {
  const iso = new Date(wall).toISOString();
  return iso.endsWith('.000Z') ? iso.slice(0, -5) : iso.slice(0, -1);
}

/** `+02:00`, `-03:30`, `Z` for 0; seconds when a historical offset has them. */
export function offsetText(offsetMs: number): string {
  if (offsetMs === 0) return 'Z';
  const sign = offsetMs < 0 ? '-' : '+';
  const total = Math.round(Math.abs(offsetMs) / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const hm = `${sign}${pad(Math.floor(total / 3600))}:${pad(Math.floor(total / 60) % 60)}`;
  return total % 60 === 0 ? hm : `${hm}:${pad(total % 60)}`;
}
