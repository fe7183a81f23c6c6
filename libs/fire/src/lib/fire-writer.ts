import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { FireRef, NEAR_NOW_MS } from '@timer/contracts';
import { CALENDAR_PREFIX, NewTask, TaskRepository, TimerEntity } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { SliceIndex } from '@timer/redis';
import { BusinessCalendar, CalendarRules, fireTimesBetween, nextFireTimes, OnExcluded, specOf, StoredSchedule } from '@timer/schedule';
import type { EntityManager } from 'typeorm';
import { taskMessage } from './task-messages';
import { TaskPublisher } from './task-publisher';

export type FireRows = Pick<TaskRepository, 'insertIgnore'>;
export type FireIndexer = Pick<SliceIndex, 'add'>;
export type DueFirePublisher = Pick<TaskPublisher, 'publish' | 'publishBatch'>;

/** What {@link FireWriter.write} did: rows inserted, the fires already due, and those left to index. */
export interface WrittenFires {
  inserted: number;
  /** Due within NEAR_NOW_MS: hand them to {@link FireWriter.publishDue} once the rows are committed. */
  due: FireRef[];
  /** Written in a caller's transaction, due later: indexed by {@link FireWriter.afterCommit}. */
  unindexed: FireRef[];
}

/** The calendar columns of a timer (absent: none). */
export interface TimerCalendars {
  calendarRules?: CalendarRules[] | null;
  onExcluded?: string | null;
}

/** The timer's calendars with its `onExcluded`, or undefined when it has none. */
export function businessCalendarOf(timer: StoredSchedule & TimerCalendars): BusinessCalendar | undefined {
  if (!timer.calendarRules || timer.calendarRules.length === 0) return undefined;
  return new BusinessCalendar(timer.calendarRules, (timer.onExcluded ?? 'skip') as OnExcluded, timer.timeZone);
}

/** Task messages sent at once by {@link FireWriter.publishDue}. */
const PUBLISH_CHUNK = 1_000;
/**
 * Fires per task message when {@link FireWriter.publishDue} sends many: a migrator catching up on a
 * window (bulk-loaded timers, a long outage) publishes hundreds of thousands of past-due fires, and
 * one message per fire cost the broker and the executor per message (docs/architecture.md, "trigger").
 */
const DUE_BATCH = 100;

/**
 * Turns timers into stored fires, for every path that creates them (enable, run now, the migrator's
 * windows): task rows in MySQL first, then either their slice index entries (the trigger's walk
 * publishes them) or, for fires due within NEAR_NOW_MS, which the walk may already have passed, their
 * task messages (`publishDue`). Rows always come first, so every message names an existing row.
 */
@Injectable()
export class FireWriter implements BeforeApplicationShutdown {
  private readonly logger = new Logger(FireWriter.name);
  /** Due-fire publishes {@link afterCommit} started and did not wait for. */
  private readonly publishing = new Set<Promise<unknown>>();

  constructor(
    @Inject(TaskRepository) private readonly rows: FireRows,
    @Inject(SliceIndex) private readonly index: FireIndexer,
    @Inject(TaskPublisher) private readonly publisher: DueFirePublisher,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  /**
   * The fires of `timer` in [fromMs, untilMs), at most `limit` of its schedule's, within its bounds
   * (startAt, endAt and the final instant maxFires gives: a fire after the last is never created), after
   * its calendars (docs/calendars.md): a fire a calendar excludes comes with `excluded` (`calendar <name>`,
   * written missed), a moved one at its business day. Throws `ScheduleError` when its stored schedule
   * does not evaluate.
   */
  static firesOf(timer: Pick<TimerEntity, 'id' | 'app' | 'cron' | 'runAt' | 'timeZone'> & StoredSchedule & TimerCalendars, fromMs: number, untilMs: number, limit?: number): NewTask[] {
    const calendar = businessCalendarOf(timer);
    if (!calendar) return fireTimesBetween(specOf(timer), fromMs, untilMs, limit).map((runAt) => ({ app: timer.app, timerId: timer.id, runAt }));
    return calendar
      .firesBetween(specOf(timer), fromMs, untilMs, limit)
      .map((f) => ({ app: timer.app, timerId: timer.id, runAt: f.at, ...(f.excluded !== undefined ? { excluded: `${CALENDAR_PREFIX}${f.excluded}` } : {}) }));
  }

  /**
   * The timer's first fire at or after `fromMs` (within its bounds and DST policies, after its
   * calendars), or null when it has none left: its `next_fire_at` once every fire before `fromMs` is
   * written. Throws `ScheduleError` when its stored schedule does not evaluate.
   */
  static nextFireAt(timer: StoredSchedule & TimerCalendars, fromMs: number): number | null {
    const calendar = businessCalendarOf(timer);
    if (calendar) return calendar.nextFireAt(specOf(timer), fromMs);
    const [next] = nextFireTimes(specOf(timer), fromMs - 1, 1);
    return next ?? null;
  }

  /**
   * Writes fires: rows (INSERT IGNORE), then the index entries of the fires due later than NEAR_NOW_MS.
   * Inside `manager`'s transaction the index is left to {@link afterCommit}: an entry visible before
   * its row is committed would be published, and its claim would wait on the uncommitted row or find
   * none. The fires due sooner are returned for {@link publishDue}.
   */
  async write(fires: NewTask[], manager?: EntityManager): Promise<WrittenFires> {
    if (fires.length === 0) return { inserted: 0, due: [], unindexed: [] };
    const horizon = this.clock.now() + NEAR_NOW_MS;
    const inserted = await this.rows.insertIgnore(fires, manager);
    const later: FireRef[] = [];
    const due: FireRef[] = [];
    // A calendar's excluded fire is written settled (missed): nothing to index or publish.
    for (const f of fires) if (f.excluded === undefined) (f.runAt > horizon ? later : due).push({ timerId: f.timerId, runAt: f.runAt });
    if (manager) return { inserted, due, unindexed: later };
    if (later.length > 0) await this.index.add(later);
    return { inserted, due, unindexed: [] };
  }

  /**
   * Once the transaction that wrote `written` has committed: indexes its later fires and publishes its
   * due ones, those that came within NEAR_NOW_MS while it committed included (the walk may have passed
   * them). Resolves once the index is written; the publish goes on without holding the request, so an
   * enable costs the same whatever the schedule's frequency (docs/benchmarks.md, "Enable by
   * frequency"): a publish that fails is indexed, and one cut short by a crash leaves a committed row
   * the reconciler rescues. An index failure is only logged: the trigger's walk reads MySQL too (its
   * reconcile), so the fires still go out. Never throws.
   */
  async afterCommit(written: Pick<WrittenFires, 'due' | 'unindexed'>): Promise<void> {
    const horizon = this.clock.now() + NEAR_NOW_MS;
    const due = [...written.due];
    const later: FireRef[] = [];
    for (const f of written.unindexed) (f.runAt > horizon ? later : due).push(f);
    if (due.length > 0) {
      const publish = this.publishDue(due).finally(() => this.publishing.delete(publish));
      this.publishing.add(publish);
    }
    if (later.length === 0) return;
    await this.index.add(later).catch((e: Error) => {
      this.logger.warn(`${later.length} fire(s) not indexed (the trigger's reconcile reads them from MySQL): ${e.message}`);
    });
  }

  /** Lets the publishes still under way finish before the broker and Redis connections close. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.publishing]);
  }

  /**
   * Publishes the task messages of fires already due, once their rows are committed. A fire whose
   * publish fails is indexed instead (the walk takes it if it has not passed it yet, the reconciler
   * otherwise); never throws. Returns how many were published.
   */
  async publishDue(due: FireRef[], properties: Record<string, string> = {}): Promise<number> {
    let published = 0;
    const failed: FireRef[] = [];
    let firstError: unknown;
    // Properties (run now) belong to one fire's message; otherwise fires share messages.
    const perMessage = Object.keys(properties).length > 0 ? 1 : DUE_BATCH;
    const messages: FireRef[][] = [];
    for (let i = 0; i < due.length; i += perMessage) messages.push(due.slice(i, i + perMessage));
    const atOnce = Math.max(1, Math.floor(PUBLISH_CHUNK / perMessage));
    for (let i = 0; i < messages.length; i += atOnce) {
      const chunk = messages.slice(i, i + atOnce);
      const results = await Promise.allSettled(
        chunk.map((fires) => (fires.length === 1 ? this.publisher.publish(taskMessage(fires[0]), properties) : this.publisher.publishBatch(fires.map((f) => taskMessage(f))))),
      );
      results.forEach((r, j) => {
        if (r.status === 'fulfilled') published += chunk[j].length;
        else {
          failed.push(...chunk[j]);
          firstError ??= r.reason;
        }
      });
    }
    if (failed.length > 0) {
      this.logger.warn(`${failed.length} due fire(s) could not be published (${String((firstError as Error)?.message ?? firstError)}); indexed for the walk and the reconciler`);
      await this.index.add(failed).catch((e: Error) => this.logger.warn(`indexing them failed too (the reconciler finds them): ${e.message}`));
    }
    return published;
  }
}
