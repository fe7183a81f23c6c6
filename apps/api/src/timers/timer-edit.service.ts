import { Inject, Injectable } from '@nestjs/common';
import { preparedWindows } from '@timer/contracts';
import { DuplicateTimerNameError, runInTransaction, TimerChange, TimerFields, TimerRepository, TimerStatus, TimerVersionRepository } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { FireRegenerator, Regeneration } from '@timer/fire';
import { DataSource } from 'typeorm';
import { assertTimerAccess, Principal } from '../auth/principal';
import { ApiError, conflict, ErrorCode } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { QuotaService } from '../quotas/quota.service';
import { PatchTimerDto, TimerVersionsQuery, UpdateTimerDto } from './dto/edit-timer.dto';
import { EditResult, TimerVersionView } from './dto/timer.view';
import {
  checkDefinition,
  fieldsOf,
  patchedFields,
  resolveSchedule,
  sameFields,
  scheduleChanged,
  scheduleSpecOf,
  spreadCarried,
  spreadChanged,
  spreadOf,
  storedFields,
} from './timer-definition';
import { TimerRef } from './timer-ref';
import { definitionView, TimersService } from './timers.service';

/** An edit: the timer, the version it was made against, and the definition it makes of the stored one. */
interface Edit {
  ref: TimerRef;
  version: number;
  change: Extract<TimerChange, 'update' | 'patch'>;
  next: (stored: TimerFields) => TimerFields;
  /** The request gave the schedule or its bounds (a runAt must then be in the future and a fire must be left, as in create). */
  scheduleGiven: boolean;
}

/**
 * Edits of a timer's definition (PUT replaces it, PATCH changes the fields given) and its history.
 * One transaction under the timer's row lock: the version check, the checks of create, the new
 * definition and its version snapshot, and the fires regenerated (FireRegenerator): in the near future
 * (TIMER_PRECREATE_SECONDS), pending fires that the new schedule does not have are recorded missed as
 * superseded and its missing ones are created; later open fires are deleted, and the migrator writes
 * the new schedule's from there. Fires already claimed finish as they were claimed.
 */
@Injectable()
export class TimerEditService {
  constructor(
    private readonly config: ApiConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly dataSource: DataSource,
    private readonly timers: TimerRepository,
    private readonly versions: TimerVersionRepository,
    private readonly regenerator: FireRegenerator,
    private readonly timerService: TimersService,
    private readonly quotas: QuotaService,
  ) {}

  replace(p: Principal, dto: UpdateTimerDto): Promise<EditResult> {
    const fields = fieldsOf(dto);
    return this.edit(p, { ref: dto, version: dto.version, change: 'update', next: () => fields, scheduleGiven: true });
  }

  patch(p: Principal, dto: PatchTimerDto): Promise<EditResult> {
    const scheduleGiven = (['cron', 'runAt', 'every', 'timeZone', 'startAt', 'endAt', 'maxFires'] as const).some((k) => dto[k] !== undefined);
    return this.edit(p, { ref: dto, version: dto.version, change: 'patch', next: (stored) => patchedFields(stored, dto), scheduleGiven });
  }

  /** The timer's versions, newest first (the first is the current definition). */
  async list(p: Principal, q: TimerVersionsQuery): Promise<{ data: TimerVersionView[]; total: number }> {
    await this.timerService.find(p, q);
    const { items, total } = await this.versions.list(q.id, { page: q.pageIndex, size: q.pageSize });
    return { data: items.map((v) => ({ ...definitionView(v), version: v.version, change: v.change, changedAt: Number(v.changedAt) })), total };
  }

  private async edit(p: Principal, e: Edit): Promise<EditResult> {
    assertTimerAccess(p, e.ref.app);
    const now = this.clock.now();
    const id = Number(e.ref.id);
    let regenerated: Regeneration | undefined;
    let result: EditResult;
    try {
      result = await runInTransaction(this.dataSource, async (m): Promise<EditResult> => {
        // Timer row before app row, as in every write that takes both (the app's for admission only).
        const locked = await this.timerService.lock(m, e.ref);
        if (locked.version !== e.version) throw staleVersion(e.version, locked.version);
        const stored = storedFields(locked);
        const fields = spreadCarried(stored, resolveSchedule(e.next(stored), now, stored));
        checkDefinition(fields, this.timerService.rules(now), e.scheduleGiven);
        fields.calendarRules = await this.timerService.calendarRules(e.ref.app, fields.calendars, m);
        if (sameFields(stored, fields)) return { id, version: locked.version, changed: false, superseded: 0, fires: 0 };
        if (scheduleChanged(stored, fields) || spreadChanged(stored, fields)) {
          const candidate = { app: e.ref.app, spec: scheduleSpecOf(fields), timerId: e.ref.id, writesFires: locked.status === TimerStatus.Enabled, spread: spreadOf(fields) };
          fields.spreadOffsetMs = await this.quotas.admit(m, await this.quotas.lock(m, e.ref.app), candidate, now);
        }
        await this.timers.update(e.ref.app, e.ref.id, fields, m);
        await this.versions.snapshot(e.ref.id, e.change, now, m);
        const version = locked.version + 1;
        if (scheduleChanged(stored, fields)) {
          // The near future regenerated, the rest dropped for the migrator; index entries up to one window
          // past the prepared ones (a migrator whose clock runs ahead may have prepared it).
          const until = now + this.config.precreateMs;
          const indexUntilMs = preparedWindows(now, this.config.windowMs).until + this.config.windowMs;
          regenerated = await this.regenerator.regenerate({ ...locked, ...fields, version }, { fromMs: now, toMs: until, createUntilMs: until, dropAfter: { indexUntilMs } }, m);
        }
        return { id, version, changed: true, superseded: regenerated?.superseded.length ?? 0, fires: regenerated?.written ?? 0 };
      });
    } catch (err) {
      if (err instanceof DuplicateTimerNameError) throw conflict(`app ${e.ref.app} already has a timer named ${JSON.stringify(err.timerName)}`);
      throw err;
    }
    // After the commit (a message must name a committed row): fires due within seconds, and the
    // superseded fires out of the slice index.
    if (regenerated) await this.regenerator.afterCommit(regenerated);
    return result;
  }
}

/** 409 with the current version in `data.version`, so the client can re-read and apply its change again. */
function staleVersion(given: number, current: number): ApiError {
  return new ApiError(
    409,
    ErrorCode.STALE_VERSION,
    `version ${given} is not the current version of the timer (${current}): GET it, apply the change to it and send version ${current}`,
    {},
    { version: current },
  );
}
