import { Inject, Injectable, Logger } from '@nestjs/common';
import { BackfillRepository, runInTransaction, TimerStatus } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { TaskPublisher, taskMessage } from '@timer/fire';
import { fireTimesBetween, specOf } from '@timer/schedule';
import { DataSource } from 'typeorm';
import { assertTimerAccess, Principal } from '../auth/principal';
import { badRequest, conflict } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { BackfillDto, BackfillResult } from './dto/backfill.dto';
import { asBadRequest } from './timer-definition';
import { TimersService } from './timers.service';

/** Task messages in flight at once while a backfill publishes. */
const PUBLISH_CHUNK = 500;

/**
 * Backfill (docs/behaviour.md, "Backfill"): the fires of a past range of a timer's schedule, created
 * (marked backfill) where none exists and published as backfill task messages: delivered however
 * late, under the timer's overlap policy, on the catch-up lane so on-time fires keep their pace.
 */
@Injectable()
export class BackfillService {
  private readonly logger = new Logger(BackfillService.name);

  constructor(
    private readonly config: ApiConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly dataSource: DataSource,
    private readonly timers: TimersService,
    private readonly backfills: BackfillRepository,
    private readonly publisher: TaskPublisher,
  ) {}

  async backfill(p: Principal, dto: BackfillDto): Promise<BackfillResult> {
    assertTimerAccess(p, dto.app);
    const now = this.clock.now();
    if (dto.to > now) throw badRequest(`to ${new Date(dto.to).toISOString()} is in the future: a backfill covers past fires only (to <= now)`);
    if (dto.to <= dto.from) throw badRequest('to must be after from');
    const max = this.config.backfillMaxFires;
    const { runAts, created, existing } = await runInTransaction(this.dataSource, async (m) => {
      const timer = await this.timers.lock(m, dto);
      if (timer.status !== TimerStatus.Enabled) throw conflict('timer is not enabled: enable it before a backfill (the executor skips fires of a timer that is not)');
      const runAts = asBadRequest(() => this.firesIn(specOf(timer), dto.from, dto.to, max));
      return { runAts, ...(await this.backfills.insertMissing(m, dto.app, dto.id, dto.from, dto.to, runAts)) };
    });
    const published = await this.publish(dto.id, created);
    return { fires: runAts.length, created: created.length, existing, published };
  }

  /** The schedule's instants in [from, to), within its bounds; a 400 naming the count beyond `max`. */
  private firesIn(spec: ReturnType<typeof specOf>, from: number, to: number, max: number): number[] {
    try {
      return fireTimesBetween(spec, from, to, max);
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      throw badRequest(`from/to: the range holds more than ${max} fires (TIMER_BACKFILL_MAX_FIRES); backfill it in parts`);
    }
  }

  /**
   * Publishes the created fires' task messages (the catch-up lane takes those more than 5 s late).
   * One that fails is left to the reconciler, which re-publishes a pending fire after its grace, as
   * a backfill (from `tasks.backfill`): nothing is lost, nothing thrown after the commit.
   */
  private async publish(timerId: string, runAts: number[]): Promise<number> {
    let published = 0;
    let firstError: unknown;
    for (let i = 0; i < runAts.length; i += PUBLISH_CHUNK) {
      const chunk = runAts.slice(i, i + PUBLISH_CHUNK);
      const results = await Promise.allSettled(chunk.map((runAt) => this.publisher.publish(taskMessage({ timerId, runAt }, { backfill: true }))));
      for (const r of results) {
        if (r.status === 'fulfilled') published++;
        else firstError ??= r.reason;
      }
    }
    if (published < runAts.length) {
      this.logger.warn(`backfill of timer ${timerId}: ${runAts.length - published} fire(s) not published (${String((firstError as Error)?.message ?? firstError)}); the reconciler publishes them`);
    }
    return published;
  }
}
