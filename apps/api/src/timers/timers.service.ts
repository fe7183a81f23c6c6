import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLOCK, NowClock } from '@timer/platform';
import { FireRef, fireId, MESSAGE_PROPERTIES, MINUTE_MS, preparedWindows } from '@timer/contracts';
import { AppRepository, DuplicateTimerNameError, TaskRepository, TimerEntity, TimerRepository, TimerStatus } from '@timer/dal';
import { SliceIndex } from '@timer/redis';
import { FireWriter } from '@timer/runtime';
import { nextFireTimes, ScheduleError, ScheduleSpec, specOf, validateSchedule } from '@timer/schedule';
import { DataSource, EntityManager } from 'typeorm';
import { assertAppAccess, assertTimerAccess, isAdmin, Principal } from '../auth/principal';
import { ApiError, badRequest, conflict, ErrorCode, notFound } from '../common/errors';
import { normalizeHeaderMap } from '../common/validators';
import { ApiConfig } from '../config/api.env';
import { isPrivateLiteralHost } from './callback-policy';
import { CreateTimerDto } from './dto/create-timer.dto';
import { ListTimersQuery } from './dto/list-timers.query';
import { DEFAULT_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS } from './dto/retry-policy.dto';
import { EnableResult, RunResult, TimerView } from './dto/timer.view';
import { PreviewCache } from './preview-cache';
import { TimerRef } from './timer-ref';

/** Upper bound of fires one enable may pre-create (a 1-second cron over 3 x 24 h windows is 259,200). */
const MAX_PRECREATE = 300_000;

/** Timers: create, read, list, enable/disable, delete, run now. Controllers only call this. */
@Injectable()
export class TimersService {
  private readonly logger = new Logger(TimersService.name);
  /** Apps already ensured by this process (apps are never deleted), to spare a write per create. */
  private readonly knownApps = new Set<string>();
  private readonly previews = new PreviewCache();

  constructor(
    private readonly config: ApiConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly dataSource: DataSource,
    private readonly timers: TimerRepository,
    private readonly tasks: TaskRepository,
    private readonly apps: AppRepository,
    private readonly fires: FireWriter,
    private readonly slices: SliceIndex,
  ) {}

  async create(p: Principal, dto: CreateTimerDto): Promise<{ id: number }> {
    assertAppAccess(p, dto.app);
    const now = this.clock.now();
    const spec = this.schedule(dto.cron, dto.runAt, dto.timeZone);
    if (spec.runAt !== undefined && spec.runAt <= now) throw badRequest(`runAt ${new Date(spec.runAt).toISOString()} is not in the future`);
    // Whether a cron ever matches does not depend on the zone (gaps still fire): check on the cheap UTC axis.
    if (spec.cron !== undefined && this.safe(() => nextFireTimes({ cron: spec.cron, timeZone: 'UTC' }, now, 1)).length === 0) {
      throw badRequest('cron never fires (no matching time in the coming years)');
    }
    const n = dto.notifyHTTPParam;
    if (!this.config.allowPrivateCallbacks && isPrivateLiteralHost(n.url)) {
      throw badRequest('notifyHTTPParam.url points to a loopback or private address; refused unless TIMER_CALLBACK_ALLOW_PRIVATE=true');
    }
    if (n.body !== undefined && Buffer.byteLength(n.body, 'utf8') > this.config.callbackBodyMaxBytes) {
      throw badRequest(`notifyHTTPParam.body is larger than ${this.config.callbackBodyMaxBytes} bytes`);
    }
    if (isAdmin(p)) await this.ensureApp(dto.app);
    try {
      const id = await this.timers.insert({
        app: dto.app,
        name: dto.name,
        cron: spec.cron ?? null,
        runAt: spec.runAt ?? null,
        timeZone: spec.timeZone,
        notifyHttpParam: {
          url: n.url,
          method: n.method,
          ...(n.header ? { header: normalizeHeaderMap(n.header) } : {}),
          ...(n.body !== undefined ? { body: n.body } : {}),
        },
        maxAttempts: dto.retryPolicy?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        backoffMs: dto.retryPolicy?.backoffMs ?? DEFAULT_BACKOFF_MS,
        misfirePolicy: dto.misfirePolicy ?? 'fire_late',
      });
      return { id: Number(id) };
    } catch (e) {
      if (e instanceof DuplicateTimerNameError) throw conflict(`app ${dto.app} already has a timer named ${JSON.stringify(dto.name)}`);
      throw e;
    }
  }

  async get(p: Principal, ref: TimerRef): Promise<TimerView> {
    const timer = await this.find(p, ref);
    const now = this.clock.now();
    return { ...toView(timer), nextFireTimes: this.safe(() => this.previews.next(timer.id, specOf(timer), now, this.config.previewCount)) };
  }

  async list(p: Principal, q: ListTimersQuery): Promise<{ data: TimerView[]; total: number }> {
    assertAppAccess(p, q.app);
    const { items, total } = await this.timers.list(q.app, { page: q.pageIndex, size: q.pageSize, name: q.name, status: q.status });
    return { data: items.map(toView), total };
  }

  /**
   * Enables a timer and pre-creates its fires in [now, end of the prepared windows) (`preparedWindows`:
   * the current window and the next two, seed 4.6.2 "next two step1"):
   * task rows (INSERT IGNORE on the unique (timer_id, run_at)) and slice index entries, under the
   * timer's row lock, in one transaction with the status change. Re-running it creates nothing twice.
   */
  async enable(p: Principal, ref: TimerRef): Promise<EnableResult> {
    assertTimerAccess(p, ref.app);
    const now = this.clock.now();
    const until = preparedWindows(now, this.config.windowMs).until;
    let due: FireRef[] = [];
    const result = await this.dataSource.transaction(async (m): Promise<EnableResult> => {
      const locked = await this.lock(m, ref);
      if (locked.status === TimerStatus.Enabled) return { changed: false, fires: 0, until };
      const spec = specOf(locked);
      if (spec.runAt !== undefined && spec.runAt < now) {
        throw new ApiError(400, ErrorCode.PAST_RUN_AT, `runAt ${new Date(spec.runAt).toISOString()} has passed: a one-shot timer can only be enabled before its time`);
      }
      const fires = this.safe(() => FireWriter.firesOf(locked, now, until, MAX_PRECREATE));
      await this.timers.setStatus(ref.app, ref.id, TimerStatus.Enabled, m);
      // Inside the transaction: if Redis fails it rolls back and the client retries.
      due = (await this.fires.write(fires, m)).due;
      return { changed: true, fires: fires.length, until };
    });
    // After the commit (a message must name a committed row): fires due within seconds, which the
    // trigger's walk may already have passed.
    await this.fires.publishDue(due);
    return result;
  }

  /** Disables a timer. Pending fires stay: the executor checks the status before calling back. */
  async disable(p: Principal, ref: TimerRef): Promise<{ changed: boolean }> {
    assertTimerAccess(p, ref.app);
    return this.dataSource.transaction(async (m) => {
      const locked = await this.lock(m, ref);
      if (locked.status === TimerStatus.Disabled) return { changed: false };
      await this.timers.setStatus(ref.app, ref.id, TimerStatus.Disabled, m);
      return { changed: true };
    });
  }

  /** Soft-deletes a timer (its name becomes reusable) and removes its pending fires from MySQL and Redis. */
  async delete(p: Principal, ref: TimerRef): Promise<{ removedFires: number }> {
    assertTimerAccess(p, ref.app);
    const now = this.clock.now();
    const removed = await this.dataSource.transaction(async (m) => {
      await this.lock(m, ref);
      await this.timers.softDelete(ref.app, ref.id, m, now);
      return this.tasks.deletePending(ref.id, m);
    });
    // After the commit: the timer is gone for the executor whatever Redis says; the index entries are
    // removed so the trigger does not publish them at all.
    const window = this.config.windowMs;
    // One window past the prepared ones: a migrator whose clock runs ahead may have prepared it.
    const from = now - 2 * MINUTE_MS;
    const to = preparedWindows(now, window).until + window;
    await this.slices.removeTimer(ref.id, from, to).catch((e: Error) => {
      this.logger.warn(`timer ${ref.id} deleted; its slice index entries stay until they expire (executor skips them): ${e.message}`);
    });
    return { removedFires: removed };
  }

  /**
   * Runs a timer now: a task row at the current instant and its task message, published here (the
   * trigger's walk is past it). The message is marked run-now: the misfire policy does not apply.
   */
  async runNow(p: Principal, ref: TimerRef): Promise<RunResult> {
    const timer = await this.find(p, ref);
    if (timer.status !== TimerStatus.Enabled) throw conflict('timer is disabled: enable it before running it (the executor skips fires of disabled timers)');
    const runAt = this.clock.now();
    const { due } = await this.fires.write([{ app: ref.app, timerId: ref.id, runAt }]);
    await this.fires.publishDue(due, { [MESSAGE_PROPERTIES.runNow]: '1' });
    return { fireId: fireId(ref.id, runAt), runAt };
  }

  /** The live timer `ref` names, if the caller may see it; 404 otherwise (another app's timer included). */
  async find(p: Principal, ref: TimerRef): Promise<TimerEntity> {
    assertTimerAccess(p, ref.app);
    const timer = await this.timers.findLive(ref.app, ref.id);
    if (!timer) throw notFound('timer not found');
    return timer;
  }

  /** The live timer, row-locked (SELECT ... FOR UPDATE) until the transaction ends; 404 when absent. */
  private async lock(m: EntityManager, ref: TimerRef): Promise<TimerEntity> {
    const timer = await this.timers.findLiveForUpdate(ref.app, ref.id, m);
    if (!timer) throw notFound('timer not found');
    return timer;
  }

  private async ensureApp(app: string): Promise<void> {
    if (this.knownApps.has(app)) return;
    await this.apps.ensure(app);
    if (this.knownApps.size > 10_000) this.knownApps.clear();
    this.knownApps.add(app);
  }

  private schedule(cron: string | undefined, runAt: number | undefined, timeZone: string | undefined): ScheduleSpec {
    const spec: ScheduleSpec = { timeZone: timeZone ?? 'UTC' };
    if (cron !== undefined) spec.cron = cron;
    if (runAt !== undefined) spec.runAt = runAt;
    this.safe(() => validateSchedule(spec));
    return spec;
  }

  /** Runs schedule code, turning its `ScheduleError` into a 400 naming the field. */
  private safe<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof ScheduleError) throw badRequest(`${e.field}: ${e.message}`);
      throw e;
    }
  }
}

export function toView(t: TimerEntity): TimerView {
  const n = t.notifyHttpParam;
  return {
    id: Number(t.id),
    app: t.app,
    name: t.name,
    cron: t.cron ?? null,
    runAt: t.runAt === null || t.runAt === undefined ? null : Number(t.runAt),
    timeZone: t.timeZone,
    notifyHTTPParam: { url: n.url, method: n.method, ...(n.header ? { header: n.header } : {}), ...(n.body !== undefined ? { body: n.body } : {}) },
    status: t.status,
    retryPolicy: { maxAttempts: t.maxAttempts, backoffMs: t.backoffMs },
    misfirePolicy: t.misfirePolicy,
    createdAt: t.createdAt instanceof Date ? t.createdAt.getTime() : Number(t.createdAt),
  };
}
