import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppRepository, MaintenanceWindowRepository, NewMaintenanceWindow, runInTransaction, StoredMaintenanceWindow } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { MaintenanceWindows } from '@timer/redis';
import { coveringWindow, MAINTENANCE_MAX_DURATION_MS, MAINTENANCE_MIN_DURATION_MS, nextWindowStart, ScheduleError, validateSchedule } from '@timer/schedule';
import { DataSource, EntityManager } from 'typeorm';
import { assertAppAccess, Principal } from '../auth/principal';
import { badRequest, notFound, unavailable } from '../common/errors';
import { CreateMaintenanceDto, MaintenanceWindowView } from './dto/maintenance.dto';

/** A fire time of a timer that a window covers (the timer's GET). */
export interface CoveredFire {
  at: number;
  windowId: string;
  policy: 'skip' | 'defer';
  /** The end of the window's occurrence: where a deferred fire goes. */
  until: number;
}

/**
 * Maintenance windows of an app (docs/behaviour.md, "Maintenance windows"): stored in MySQL, mirrored
 * per app into Redis (`MaintenanceWindows`) inside the same transaction, so a failed mirror write
 * changes nothing; the executors read the mirror every second and skip or defer covered fires.
 */
@Injectable()
export class MaintenanceService {
  private readonly logger = new Logger(MaintenanceService.name);

  constructor(
    private readonly windows: MaintenanceWindowRepository,
    private readonly apps: AppRepository,
    private readonly mirror: MaintenanceWindows,
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  async create(p: Principal, dto: CreateMaintenanceDto): Promise<MaintenanceWindowView> {
    assertAppAccess(p, dto.app);
    const w = this.check(dto);
    if (!(await this.apps.find(dto.app))) throw notFound(`app ${dto.app} not found`);
    if (w.timerIds !== null) {
      const live = await this.windows.liveTimerIds(dto.app, w.timerIds);
      const unknown = w.timerIds.filter((id) => !live.has(id));
      if (unknown.length > 0) throw notFound(`timerIds: no timer ${unknown.slice(0, 5).join(', ')} in app ${dto.app}`);
    }
    const stored = await runInTransaction(this.dataSource, async (m) => {
      const id = await this.windows.insert(w, m);
      await this.sync(dto.app, m);
      return (await this.windows.list(dto.app, m)).find((x) => x.id === id) as StoredMaintenanceWindow;
    });
    return this.view(stored);
  }

  async list(p: Principal, app: string): Promise<MaintenanceWindowView[]> {
    assertAppAccess(p, app);
    if (!(await this.apps.find(app))) throw notFound(`app ${app} not found`);
    return (await this.windows.list(app)).map((w) => this.view(w));
  }

  async delete(p: Principal, app: string, id: string): Promise<void> {
    assertAppAccess(p, app);
    await runInTransaction(this.dataSource, async (m) => {
      if (!(await this.windows.delete(app, id, m))) throw notFound(`app ${app} has no maintenance window ${id}`);
      await this.sync(app, m);
    });
  }

  /** The fire times among `times` of a timer that the app's windows cover (for the timer's GET). */
  async covered(app: string, timerId: string, times: readonly number[]): Promise<CoveredFire[]> {
    const ws = await this.windows.list(app);
    if (ws.length === 0) return [];
    const out: CoveredFire[] = [];
    for (const at of times) {
      const hit = coveringWindow(ws, timerId, at);
      if (hit) out.push({ at, windowId: hit.window.id, policy: hit.window.policy, until: hit.end });
    }
    return out;
  }

  /** The whole app's windows into the mirror, inside the transaction: a Redis failure rolls the change back. */
  private async sync(app: string, m: EntityManager): Promise<void> {
    const all = await this.windows.list(app, m);
    try {
      await this.mirror.set(app, all.map(({ createdAt: _c, ...w }) => w));
    } catch (e) {
      this.logger.warn(`maintenance windows of app ${app}: the Redis mirror failed, change rolled back: ${(e as Error).message}`);
      throw unavailable('the maintenance window could not be recorded (nothing was changed): retry');
    }
  }

  /** Cross-field rules the DTO cannot state; 400 naming the field. */
  private check(dto: CreateMaintenanceDto): NewMaintenanceWindow {
    const fixed = dto.from !== undefined || dto.to !== undefined;
    const recurring = dto.cron !== undefined || dto.durationMs !== undefined;
    if (fixed && recurring) throw badRequest('from/to and cron/durationMs: give a fixed window (from, to) or a recurring one (cron, durationMs), not both');
    const base = { app: dto.app, timerIds: dto.timerIds ? [...new Set(dto.timerIds)] : null, policy: dto.policy };
    if (recurring) {
      if (dto.cron === undefined) throw badRequest('cron is required with durationMs');
      if (dto.durationMs === undefined) throw badRequest('durationMs is required with cron');
      if (dto.durationMs < MAINTENANCE_MIN_DURATION_MS || dto.durationMs > MAINTENANCE_MAX_DURATION_MS) {
        throw badRequest(`durationMs must be an integer from ${MAINTENANCE_MIN_DURATION_MS} to ${MAINTENANCE_MAX_DURATION_MS} (7 days)`);
      }
      try {
        validateSchedule({ cron: dto.cron, timeZone: 'UTC' });
      } catch (e) {
        if (e instanceof ScheduleError) throw badRequest(e.message.startsWith('cron') ? e.message : `cron: ${e.message}`);
        throw e;
      }
      return { ...base, fromMs: null, toMs: null, cron: dto.cron, durationMs: dto.durationMs };
    }
    if (dto.from === undefined) throw badRequest('from is required (or cron and durationMs for a recurring window)');
    if (dto.to === undefined) throw badRequest('to is required with from');
    if (dto.to <= dto.from) throw badRequest('to must be after from');
    if (dto.to <= this.clock.now()) throw badRequest('to must be in the future: the window would cover no fire');
    return { ...base, fromMs: dto.from, toMs: dto.to, cron: null, durationMs: null };
  }

  private view(w: StoredMaintenanceWindow): MaintenanceWindowView {
    return {
      id: w.id,
      app: w.app,
      timerIds: w.timerIds,
      from: w.fromMs,
      to: w.toMs,
      cron: w.cron,
      durationMs: w.durationMs,
      policy: w.policy,
      nextStart: nextWindowStart(w, this.clock.now()),
      createdAt: w.createdAt,
    };
  }
}
