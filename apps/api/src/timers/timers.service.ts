import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLOCK, NowClock } from '@timer/platform';
import { fireId, MESSAGE_PROPERTIES, MINUTE_MS, preparedWindows } from '@timer/contracts';
import {
  AppRepository,
  DuplicateTimerNameError,
  IDEMPOTENCY_KEY_TTL_MS,
  IdempotencyKeyRepository,
  IdempotencyKeyTakenError,
  NewTask,
  NewTimer,
  runInTransaction,
  TaskRepository,
  TaskStatus,
  TimerEntity,
  TimerRepository,
  TimerStatus,
  TimerVersionEntity,
  TimerVersionRepository,
} from '@timer/dal';
import { FireClaims, FireFence, SliceIndex } from '@timer/redis';
import { businessCalendarOf, FireWriter, WrittenFires } from '@timer/fire';
import { CalendarFire, CalendarRules, formatInterval, specOf } from '@timer/schedule';
import { DataSource, EntityManager } from 'typeorm';
import { assertAppAccess, assertTimerAccess, isAdmin, Principal } from '../auth/principal';
import { ApiError, badRequest, conflict, ErrorCode, notFound, unavailable } from '../common/errors';
import { ApiValidationPipe } from '../common/validation.pipe';
import { ApiConfig } from '../config/api.env';
import { MaintenanceService } from '../maintenance/maintenance.service';
import { Candidate, QuotaService } from '../quotas/quota.service';
import { atItem, atItemAsync, checkDistinctNames } from './batch-items';
import { CreateTimerBatchDto } from './dto/create-batch.dto';
import { CreateTimerDto } from './dto/create-timer.dto';
import { ListTimersQuery } from './dto/list-timers.query';
import { BatchCreatedTimer, CalendarMarkView, DisableResult, EnableResult, RunResult, TimerDefinitionView, TimerView } from './dto/timer.view';
import { CalendarResolver } from './calendar-resolver';
import { PreviewCache } from './preview-cache';
import { asBadRequest, batchRequestHash, checkDefinition, DefinitionRules, fieldsOf, requestHash, resolveSchedule, scheduleSpecOf, spreadOf } from './timer-definition';
import { TimerRef } from './timer-ref';

/** What a create answers: the new timer's id and version, or the first answer again (`replayed`) for a repeated Idempotency-Key. */
export interface CreateResult {
  id: number;
  version: number;
  replayed?: true;
}

/** What a batch create answers: the timers in the order given, or the first answer again (`replayed`) for a repeated Idempotency-Key. */
export interface BatchCreateOutcome {
  timers: BatchCreatedTimer[];
  replayed?: true;
}

/** Upper bound of fires one enable may pre-create (a 1-second cron over the largest TIMER_PRECREATE_SECONDS is 86,400). */
const MAX_PRECREATE = 100_000;

/** Timers: create, read, list, enable/disable, delete, run now. Controllers only call this. */
@Injectable()
export class TimersService {
  private readonly logger = new Logger(TimersService.name);
  /** Apps already ensured by this process (apps are never deleted), to spare a write per create. */
  private readonly knownApps = new Set<string>();
  private readonly previews = new PreviewCache();
  /** The global pipe's rules, for the items of a batch (the route validates only the batch's shape). */
  private readonly itemPipe = new ApiValidationPipe();

  constructor(
    private readonly config: ApiConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly dataSource: DataSource,
    private readonly timers: TimerRepository,
    private readonly tasks: TaskRepository,
    private readonly apps: AppRepository,
    private readonly fires: FireWriter,
    private readonly slices: SliceIndex,
    private readonly claims: FireClaims,
    private readonly versions: TimerVersionRepository,
    private readonly idempotencyKeys: IdempotencyKeyRepository,
    private readonly maintenance: MaintenanceService,
    private readonly quotas: QuotaService,
    private readonly calendars: CalendarResolver,
  ) {}

  /**
   * Creates a timer (disabled) and records its version 1. With an Idempotency-Key, the key is reserved
   * in the same transaction (unique per app): a repeat with the same request answers the first result
   * (`replayed`), with another request 422; of two concurrent ones the second waits for the first.
   */
  async create(p: Principal, dto: CreateTimerDto, idempotencyKey?: string): Promise<CreateResult> {
    assertAppAccess(p, dto.app);
    const fields = fieldsOf(dto);
    const key = idempotencyKey === undefined ? undefined : { value: idempotencyKey, hash: requestHash(dto.app, fields) };
    // Before the checks that depend on the time: a retry after a one-shot's runAt still gets its first answer.
    const replay = key && (await this.replay(dto.app, key.value, key.hash));
    if (replay) return replay;
    const now = this.clock.now();
    const resolved = resolveSchedule(fields, now);
    checkDefinition(resolved, this.rules(now), true);
    resolved.calendarRules = await this.calendarRules(dto.app, resolved.calendars);
    if (isAdmin(p)) await this.ensureApp(dto.app);
    // Admission before the transaction, without the app's lock: a create writes no fire (QuotaService.current).
    const spread = spreadOf(resolved);
    const quota = await this.quotas.current(dto.app);
    const spreadOffsetMs = await this.quotas.admit(undefined, quota, { app: dto.app, spec: scheduleSpecOf(resolved), writesFires: false, spread }, now);
    try {
      return await runInTransaction(this.dataSource, async (m) => {
        // The timer's rows first, the app's row lock after them: concurrent creates of one app pass the
        // maxTimers check one at a time (a conditional UPDATE of apps.live_timers, which sees every create
        // committed before it) and hold the lock only for the key and the commit. The key under the lock:
        // its delete-then-insert of one key from two transactions at once would deadlock on the gap.
        const id = await this.timers.insert({ app: dto.app, ...resolved, spreadOffsetMs }, m);
        await this.versions.snapshot(id, 'create', now, m);
        const result = { id: Number(id), version: 1 };
        await this.quotas.countCreate(m, dto.app);
        if (key) await this.idempotencyKeys.reserve(dto.app, key.value, key.hash, now, now - IDEMPOTENCY_KEY_TTL_MS, m, result);
        return result;
      });
    } catch (e) {
      // A concurrent request with the same key committed first (this one waited on the unique key, or on
      // the timer's name when the body is the same).
      const first = (e instanceof IdempotencyKeyTakenError || e instanceof DuplicateTimerNameError) && key && (await this.replay(dto.app, key.value, key.hash));
      if (first) return first;
      if (e instanceof DuplicateTimerNameError) throw conflict(`app ${dto.app} already has a timer named ${JSON.stringify(dto.name)}`);
      throw e;
    }
  }

  /** The first answer given under this key, if it is younger than the TTL; 422 when it was for another request. */
  private async replay(app: string, key: string, hash: string): Promise<CreateResult | undefined> {
    const stored = await this.storedAnswer(app, key, hash);
    return stored && { id: Number(stored.id), version: Number(stored.version), replayed: true };
  }

  /** The answer stored with an Idempotency-Key younger than the TTL (none yet: undefined); 422 when the key was used for another request. */
  private async storedAnswer(app: string, key: string, hash: string): Promise<Record<string, unknown> | undefined> {
    const stored = await this.idempotencyKeys.find(app, key, this.clock.now() - IDEMPOTENCY_KEY_TTL_MS);
    if (!stored || !stored.response) return undefined;
    if (stored.bodyHash !== hash) {
      throw new ApiError(422, ErrorCode.IDEMPOTENCY_KEY_REUSED, `Idempotency-Key ${JSON.stringify(key)} was used with another request body in app ${app}: use a new key for a new request`);
    }
    return stored.response;
  }

  /**
   * Creates the timers of a batch (POST def/batch) of one app, and enables them when `enable`, in one
   * transaction: all or nothing. Each item passes the single create's checks (its DTO, checkDefinition,
   * the callback policy; a refusal names it, `timers[i]...`), quotas and admission over the batch
   * together (QuotaService.admitBatch), maxTimers counting the batch. Enabled, each timer is as after a
   * create and an enable: versions 1 (create) and 2 (enable), next_fire_at, its spread offset, the fire
   * rows of the near future (TIMER_PRECREATE_SECONDS; the migrator writes the rest of the windows),
   * indexed and, when due within seconds, published after the commit. Multi-row statements: the cost
   * per timer is what batching is for.
   */
  async createBatch(p: Principal, dto: CreateTimerBatchDto, idempotencyKey?: string): Promise<BatchCreateOutcome> {
    assertAppAccess(p, dto.app);
    const app = dto.app;
    if (dto.timers.length > this.config.batchMax) {
      throw badRequest(`timers: at most ${this.config.batchMax} timers per batch (TIMER_API_BATCH_MAX); got ${dto.timers.length}: send several batches`);
    }
    const items: CreateTimerDto[] = [];
    for (const [i, item] of dto.timers.entries()) {
      if (item.app !== undefined && item.app !== app) throw badRequest(`timers[${i}].app: ${JSON.stringify(item.app)} is not the batch's app ${JSON.stringify(app)} (leave it out)`);
      items.push(await atItemAsync(i, async () => (await this.itemPipe.transform({ ...item, app }, { type: 'body', metatype: CreateTimerDto, data: '' })) as CreateTimerDto));
    }
    const fields = items.map((item, i) => atItem(i, () => fieldsOf(item)));
    checkDistinctNames(fields.map((f) => f.name));
    const enable = dto.enable === true;
    const key = idempotencyKey === undefined ? undefined : { value: idempotencyKey, hash: batchRequestHash(app, enable, fields) };
    const replayed = async () => {
      const stored = key && (await this.storedAnswer(app, key.value, key.hash));
      return stored && { timers: stored.timers as BatchCreatedTimer[], replayed: true as const };
    };
    const first = await replayed();
    if (first) return first;
    const now = this.clock.now();
    const rules = this.rules(now);
    const until = now + this.config.precreateMs;
    const resolved = fields.map((f, i) =>
      atItem(i, () => {
        const r = resolveSchedule(f, now);
        checkDefinition(r, rules, true);
        return r;
      }),
    );
    for (const [i, r] of resolved.entries()) r.calendarRules = await atItemAsync(i, () => this.calendarRules(app, r.calendars));
    // Enabled: the fires and next_fire_at are evaluated before the transaction (no lock is held for them).
    const schedules = resolved.map((r, i) =>
      atItem(i, () => {
        if (!enable) return { fires: [] as NewTask[], nextFireAt: null };
        const stored = { ...r, id: '0', app };
        return asBadRequest(() => ({ fires: FireWriter.firesOf(stored, now, until, MAX_PRECREATE), nextFireAt: FireWriter.nextFireAt(stored, until) }));
      }),
    );
    if (isAdmin(p)) await this.ensureApp(app);
    const candidates = resolved.map((r, i): Candidate => ({ app, spec: scheduleSpecOf(r), writesFires: enable, spread: spreadOf(r), ...(enable ? { written: delivered(schedules[i].fires) } : {}) }));
    // A create's admission before the transaction, without the app's lock, as for one create; an enable's under it.
    const offsets = enable ? undefined : await this.quotas.admitBatch(undefined, await this.quotas.current(app), candidates, now);
    let written: WrittenFires | undefined;
    try {
      // READ COMMITTED: the versions' INSERT ... SELECT then reads the new rows without locking (under
      // REPEATABLE READ its shared next-key locks reached the rows a concurrent batch of the app was
      // inserting, which deadlocked with that batch's wait for the app's row lock).
      const timers = await runInTransaction(this.dataSource, 'READ COMMITTED', async (m): Promise<BatchCreatedTimer[]> => {
        // As one create: the timers' rows first, the app's row lock after them (countCreate). Enabled, the
        // rows are inserted as an enable leaves them (no UPDATE of each row, one versions statement for both
        // versions), before the lock: admission's refusal rolls them back. An autoSpread timer's offset is
        // admission's, under the lock: 0 (it fits as it is) until then.
        const rows = resolved.map((r, i): NewTimer => ({
          app,
          ...r,
          ...(enable ? { enabled: { spreadOffsetMs: r.autoSpread ? 0 : null, nextFireAt: schedules[i].nextFireAt } } : { spreadOffsetMs: offsets?.[i] ?? null }),
        }));
        const ids = await this.timers.insertMany(app, rows, m);
        const spreads = enable && candidates.some((c) => c.spread);
        // Without autoSpread the versions are final now: written before the lock, which they then do not lengthen.
        if (!enable) await this.versions.snapshotMany(ids, 'create', now, m);
        else if (!spreads) await this.versions.snapshotCreatedEnabled(ids, now, m);
        await this.quotas.countCreate(m, app, ids.length);
        let out = ids.map((id) => ({ id: Number(id), version: 1, enabled: false, fires: 0 }));
        if (enable) {
          // As one enable: admission under the app's lock (already held: the lock read costs no wait), then
          // the fire rows with their index entries.
          const spread = await this.quotas.admitBatch(m, await this.quotas.lock(m, app), candidates, now);
          if (spreads) {
            await this.timers.setSpreadOffsets(app, ids.flatMap((id, i) => (spread[i] !== rows[i].enabled?.spreadOffsetMs ? [{ id, spreadOffsetMs: spread[i] }] : [])), m);
            await this.versions.snapshotCreatedEnabled(ids, now, m);
          }
          written = await this.fires.write(ids.flatMap((id, i) => schedules[i].fires.map((f) => ({ ...f, timerId: id }))), m);
          out = ids.map((id, i) => ({ id: Number(id), version: 2, enabled: true, fires: schedules[i].fires.length }));
        }
        if (key) await this.idempotencyKeys.reserve(app, key.value, key.hash, now, now - IDEMPOTENCY_KEY_TTL_MS, m, { timers: out });
        return out;
      });
      if (written) await this.fires.afterCommit(written);
      return { timers };
    } catch (e) {
      const again = (e instanceof IdempotencyKeyTakenError || e instanceof DuplicateTimerNameError) && (await replayed());
      if (again) return again;
      if (e instanceof DuplicateTimerNameError) {
        const taken = await this.timers.liveNames(app, fields.map((f) => f.name));
        const i = fields.findIndex((f) => taken.has(f.name));
        throw conflict(i < 0 ? `app ${app} already has a timer named as one of the batch's` : `timers[${i}].name: app ${app} already has a timer named ${JSON.stringify(fields[i].name)}`);
      }
      throw e;
    }
  }

  async get(p: Principal, ref: TimerRef): Promise<TimerView> {
    const timer = await this.find(p, ref);
    const now = this.clock.now();
    const calendar = businessCalendarOf(timer);
    const calendarFires = calendar && asBadRequest(() => calendar.nextFires(specOf(timer), now, this.config.previewCount));
    const nextFireTimes = calendarFires ? calendarFires.map((f) => f.at) : asBadRequest(() => this.previews.next(timer.id, specOf(timer), now, this.config.previewCount));
    const covered = await this.maintenance.covered(timer.app, timer.id, nextFireTimes);
    const marks = calendarMarks(calendarFires ?? []);
    return { ...toView(timer), nextFireTimes, ...(covered.length > 0 ? { maintenance: covered } : {}), ...(marks.length > 0 ? { calendar: marks } : {}) };
  }

  async list(p: Principal, q: ListTimersQuery): Promise<{ data: TimerView[]; total: number }> {
    assertAppAccess(p, q.app);
    const { items, total } = await this.timers.list(q.app, { page: q.pageIndex, size: q.pageSize, name: q.name, status: q.status });
    return { data: items.map(toView), total };
  }

  /**
   * Enables a timer and pre-creates its fires of the near future, [now, now + TIMER_PRECREATE_SECONDS):
   * task rows (INSERT IGNORE on the unique (timer_id, run_at)) under the timer's row lock, in one
   * transaction with the status change, then their slice index entries; its next_fire_at is the first
   * fire after them, from which the migrator's next tick writes the rest of the prepared windows (seed
   * 4.6.2 "next two step1"), so an enable costs the same whatever the schedule's frequency. Re-running
   * it creates nothing twice.
   */
  async enable(p: Principal, ref: TimerRef): Promise<EnableResult> {
    assertTimerAccess(p, ref.app);
    const now = this.clock.now();
    const until = now + this.config.precreateMs;
    let written: WrittenFires | undefined;
    const result = await runInTransaction(this.dataSource, async (m): Promise<EnableResult> => {
      // Timer row before app row, as in every write that takes both; the app's (quotas) as late as can be:
      // it serialises the app's enables and edits, so it is held for the admission's read, the fire rows,
      // the Redis index and the commit only.
      const locked = await this.lock(m, ref);
      if (locked.status === TimerStatus.Enabled) return { changed: false, fires: 0, until, version: locked.version };
      const spec = specOf(locked);
      // Each evaluated once: the fires pre-created, the first one after them (next_fire_at), and from both
      // whether any fire is left; admission reuses the fires (a clock and a walk per evaluation cost the hot route).
      const fires = asBadRequest(() => FireWriter.firesOf(locked, now, until, MAX_PRECREATE));
      const nextFireAt = asBadRequest(() => FireWriter.nextFireAt(locked, until));
      const fireLeft = fires.length > 0 || nextFireAt !== null;
      if (!fireLeft && locked.status === TimerStatus.Completed) {
        throw conflict(
          `timer is completed: its last fire (${new Date(Number(locked.finalAt)).toISOString()}) has passed and it has no fire left; ` +
            'give it future fires with PUT or PATCH (cron, every, runAt, startAt, endAt or maxFires), then enable it',
        );
      }
      if (spec.runAt !== undefined && spec.runAt < now) {
        throw new ApiError(400, ErrorCode.PAST_RUN_AT, `runAt ${new Date(spec.runAt).toISOString()} has passed: a one-shot timer can only be enabled before its time`);
      }
      if (!fireLeft) throw conflict(`timer has no fire left (its bounds end at ${new Date(Number(locked.finalAt)).toISOString()}): change its schedule or bounds with PUT or PATCH, then enable it`);
      const spread = spreadOf(locked);
      const fireTimes = delivered(fires);
      const admit = async () => this.quotas.admit(m, await this.quotas.lock(m, ref.app), { app: ref.app, spec, timerId: ref.id, writesFires: true, spread, written: fireTimes }, now);
      // autoSpread: the offset for the load as it is now (the one chosen at create or edit may no longer be the
      // right one), admitted first as it goes into the row and its version. Without it, admission comes after them.
      const spreadOffsetMs = spread ? await admit() : null;
      // next_fire_at: every fire before `until` exists once this transaction commits: the migrator reads this timer again from its next one.
      await this.timers.markEnabled(ref.app, ref.id, { spreadOffsetMs, nextFireAt }, m);
      await this.versions.snapshot(ref.id, 'enable', now, m);
      // Before the fire rows: the capacity check reads this timer's stored fires as ones it replaces.
      if (!spread) await admit();
      written = await this.fires.write(fires, m);
      return { changed: true, fires: fires.length, until, version: locked.version + 1 };
    });
    // After the commit (an index entry or a message must name a committed row).
    if (written) await this.fires.afterCommit(written);
    return result;
  }

  /**
   * Disables a timer and deletes its pending fires after now (MySQL, in batches) and their slice index
   * entries, under the timer's row lock and before the commit: a concurrent enable waits, and a Redis
   * failure rolls the disable back (503, retry). Fires already due stay and are recorded missed by the
   * executor (`timer disabled`). Enable creates the future fires again.
   */
  async disable(p: Principal, ref: TimerRef): Promise<DisableResult> {
    assertTimerAccess(p, ref.app);
    const now = this.clock.now();
    let fences: FireFence[] = [];
    const result = await runInTransaction(this.dataSource, async (m): Promise<DisableResult> => {
      const locked = await this.lock(m, ref);
      if (locked.status === TimerStatus.Disabled) return { changed: false, version: locked.version, removedFires: 0 };
      await this.timers.setStatus(ref.app, ref.id, TimerStatus.Disabled, m);
      await this.versions.snapshot(ref.id, 'disable', now, m);
      fences = await this.nearFences(locked, now + 1, m);
      const removedFires = await this.tasks.deletePendingAfter(ref.id, now, m);
      // One window past the prepared ones: a migrator whose clock runs ahead may have prepared it.
      const until = preparedWindows(now, this.config.windowMs).until + this.config.windowMs;
      await this.slices.removeTimer(ref.id, now + 1, until).catch((e: Error) => {
        this.logger.warn(`disable of timer ${ref.id} rolled back: removing its slice index entries failed: ${e.message}`);
        throw unavailable('the disable could not remove the timer\'s fires from the index (nothing was changed): retry');
      });
      return { changed: true, version: locked.version + 1, removedFires };
    });
    await this.fence(ref.id, fences);
    return result;
  }

  /** Soft-deletes a timer (its name becomes reusable) and removes its pending fires from MySQL and Redis. */
  async delete(p: Principal, ref: TimerRef): Promise<{ removedFires: number }> {
    assertTimerAccess(p, ref.app);
    const now = this.clock.now();
    let fences: FireFence[] = [];
    const removed = await runInTransaction(this.dataSource, async (m) => {
      // Timer row before app row, as in every write that takes both; the app's (its live-timer count) last.
      const locked = await this.lock(m, ref);
      const deleted = await this.timers.softDelete(ref.app, ref.id, m, now);
      fences = await this.nearFences(locked, now - 2 * MINUTE_MS, m);
      const removedFires = await this.tasks.deletePending(ref.id, m);
      if (deleted) await this.quotas.timerRemoved(m, ref.app);
      return removedFires;
    });
    await this.fence(ref.id, fences);
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
    if (timer.status === TimerStatus.Completed) throw conflict('timer is completed: give it future fires (PUT or PATCH) and enable it before running it');
    if (timer.status !== TimerStatus.Enabled) throw conflict('timer is disabled: enable it before running it (the executor skips fires of disabled timers)');
    const runAt = this.clock.now();
    const { due } = await this.fires.write([{ app: ref.app, timerId: ref.id, runAt }]);
    await this.fires.publishDue(due, { [MESSAGE_PROPERTIES.runNow]: '1' });
    return { fireId: fireId(ref.id, runAt), runAt };
  }

  /**
   * The pending fires from `fromMs` up to a minute ahead, which a disable or delete is about to delete:
   * their task messages may be on their way, and a first claim in Redis does not read the row, so
   * they are fenced after the commit (docs/pipeline.md). Under the timer's row lock.
   */
  private async nearFences(timer: TimerEntity, fromMs: number, m: EntityManager): Promise<FireFence[]> {
    const near = await this.tasks.firesForUpdate(timer.id, fromMs, this.clock.now() + MINUTE_MS, m);
    return near.filter((f) => f.status === TaskStatus.Pending).map((f) => ({ fireId: fireId(timer.id, f.runAt), latestDue: f.runAt + Math.max(0, timer.jitterMs ?? 0) }));
  }

  /** After the commit; a failure is only logged (a message already on its way may then deliver its fire). */
  private async fence(timerId: string, fences: FireFence[]): Promise<void> {
    await this.claims.fence(fences).catch((e: Error) => this.logger.warn(`timer ${timerId}: ${fences.length} removed fire(s) not fenced in Redis: ${e.message}`));
  }

  /** The live timer `ref` names, if the caller may see it; 404 otherwise (another app's timer included). */
  async find(p: Principal, ref: TimerRef): Promise<TimerEntity> {
    assertTimerAccess(p, ref.app);
    const timer = await this.timers.findLive(ref.app, ref.id);
    if (!timer) throw notFound('timer not found');
    return timer;
  }

  /** The definitions of the calendars a definition names (400 naming `calendars` for one the app lacks); null for none. */
  calendarRules(app: string, names: readonly string[] | null | undefined, manager?: EntityManager): Promise<CalendarRules[] | null> {
    return this.calendars.resolve(app, names, manager);
  }

  /** The live timer, row-locked (SELECT ... FOR UPDATE) until the transaction ends; 404 when absent. */
  async lock(m: EntityManager, ref: TimerRef): Promise<TimerEntity> {
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

  /** What the checks of a definition depend on at `now`. */
  rules(now: number): DefinitionRules {
    return {
      now,
      allowPrivateCallbacks: this.config.allowPrivateCallbacks,
      callbackBodyMaxBytes: this.config.callbackBodyMaxBytes,
      callbackTimeoutMaxMs: this.config.callbackTimeoutMaxMs,
    };
  }
}

/** The fire times a write delivers (a calendar's excluded fires are written missed: no load). */
function delivered(fires: readonly NewTask[]): number[] {
  return fires.filter((f) => f.excluded === undefined).map((f) => f.runAt);
}

/** The excluded and moved ones among a timer's next fires, as its GET and the preview mark them. */
export function calendarMarks(fires: readonly CalendarFire[]): CalendarMarkView[] {
  return fires.flatMap((f) =>
    f.calendar === undefined ? [] : [{ at: f.at, calendar: f.calendar, ...(f.excluded !== undefined ? { excluded: true } : {}), ...(f.movedFrom !== undefined ? { movedFrom: f.movedFrom } : {}) }],
  );
}

export function toView(t: TimerEntity): TimerView {
  return {
    id: Number(t.id),
    app: t.app,
    ...definitionView(t),
    version: Number(t.version),
    createdAt: t.createdAt instanceof Date ? t.createdAt.getTime() : Number(t.createdAt),
  };
}

/** The definition and status of a timer or of one of its versions, as the API shows them. */
export function definitionView(t: TimerEntity | TimerVersionEntity): TimerDefinitionView {
  const n = t.notifyHttpParam;
  return {
    name: t.name,
    cron: t.cron ?? null,
    runAt: t.runAt === null || t.runAt === undefined ? null : Number(t.runAt),
    every: t.everyMs === null || t.everyMs === undefined ? null : formatInterval(Number(t.everyMs)),
    timeZone: t.timeZone,
    dstGap: t.dstGap,
    dstOverlap: t.dstOverlap,
    startAt: t.startAt ?? null,
    endAt: t.endAt ?? null,
    maxFires: t.maxFires ?? null,
    notifyHTTPParam: {
      url: n.url,
      method: n.method,
      ...(n.header ? { header: n.header } : {}),
      ...(n.body !== undefined ? { body: n.body } : {}),
      ...(n.timeoutMs !== undefined ? { timeoutMs: n.timeoutMs } : {}),
      ...(n.template ? { template: true } : {}),
    },
    status: t.status,
    retryPolicy: { maxAttempts: t.maxAttempts, backoffMs: t.backoffMs },
    misfirePolicy: t.misfirePolicy,
    overlapPolicy: t.overlapPolicy,
    catchupPolicy: t.catchupPolicy ?? null,
    catchupWindowMs: t.catchupWindowMs ?? null,
    jitterMs: t.jitterMs,
    failureWebhook: t.failureWebhook ?? null,
    resultWebhook: t.resultWebhook ?? null,
    autoSpread: Boolean(t.autoSpread),
    spreadOffsetMs: t.spreadOffsetMs ?? null,
    calendars: t.calendars ?? [],
    onExcluded: t.onExcluded ?? 'skip',
  };
}
