import { Inject, Injectable, Logger } from '@nestjs/common';
import { FinishedCursor, TimerRepository, TimerVersionRepository } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { DataSource } from 'typeorm';
import { MigratorConfig } from '../config/migrator.env';

export type FinishedTimers = Pick<TimerRepository, 'finishedCandidates' | 'completeIfSettled'>;
export type VersionSnapshots = Pick<TimerVersionRepository, 'snapshot'>;
export type Transactions = Pick<DataSource, 'transaction'>;

/** How often the sweep runs. */
export const COMPLETION_SWEEP_MS = 5_000;
/** Candidates one sweep looks at (each is one short transaction). */
export const COMPLETION_BATCH = 200;

/** What one sweep did. */
export interface SweepResult {
  checked: number;
  completed: number;
}

/**
 * Marks finished timers completed (status 3; docs/behaviour.md, "Completion"): an enabled timer whose
 * final fire instant (`final_at`: a one-shot's runAt, the earlier of endAt and the maxFires-th fire)
 * has passed and that has no open fire left (pending, running, waiting for a retry) becomes completed,
 * with a version of change 'complete'. Completed timers are not expanded by the migrator (it pages
 * through enabled ones only). Each sweep reads at most {@link COMPLETION_BATCH} candidates from
 * `idx_status_final`, going on from where the last one stopped, so timers that still wait for a fire
 * to settle do not hold back the others. Replicas may sweep at the same time: each completion re-checks
 * everything under the timer's row lock.
 */
@Injectable()
export class CompletionService {
  private readonly logger = new Logger(CompletionService.name);
  private cursor: FinishedCursor | null = null;

  constructor(
    @Inject(TimerRepository) private readonly timers: FinishedTimers,
    @Inject(TimerVersionRepository) private readonly versions: VersionSnapshots,
    @Inject(DataSource) private readonly dataSource: Transactions,
    @Inject(CLOCK) private readonly clock: NowClock,
    private readonly config: MigratorConfig,
  ) {}

  /** One sweep; a timer that fails is logged and left for the next sweep. */
  async sweep(): Promise<SweepResult> {
    const now = this.clock.now();
    const candidates = await this.timers.finishedCandidates(now, this.cursor, COMPLETION_BATCH);
    // A short page reached the end of the range: the next sweep starts again from the beginning.
    const last = candidates[candidates.length - 1];
    this.cursor = candidates.length < COMPLETION_BATCH ? null : { finalAt: last.finalAt, id: last.id };
    let completed = 0;
    for (const c of candidates) {
      try {
        const done = await this.dataSource.transaction(async (m) => {
          // Fires before now - catch-up are never created by the migrator: no window check for those.
          if (!(await this.timers.completeIfSettled(c.id, now, now - this.config.catchUpMs, m))) return false;
          await this.versions.snapshot(c.id, 'complete', now, m);
          return true;
        });
        if (done) completed++;
      } catch (e) {
        this.logger.warn(`timer ${c.id} (app ${c.app}): completion failed (retried next sweep): ${(e as Error).message}`);
      }
    }
    if (completed > 0) this.logger.log(`${completed} timer(s) completed (of ${candidates.length} whose last fire passed)`);
    return { checked: candidates.length, completed };
  }
}
