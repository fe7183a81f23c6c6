import { Injectable, Logger } from '@nestjs/common';
import { TimerEntity } from '@timer/dal';
import { FireWriter } from '@timer/fire';
import { AttemptOutcomes } from './attempt-outcomes.service';
import { ClaimedAttempt, FireResult } from './fire.types';
import { MaintenanceWatch } from './maintenance-watch.service';

/**
 * Maintenance windows at delivery (docs/behaviour.md, "Maintenance windows"): a scheduled first attempt
 * whose run_at falls in a window covering its timer is recorded missed, `skipped: maintenance` or
 * `deferred: maintenance`; a deferred one leaves one pending fire of the timer at the window's end
 * (the unique (timer_id, run_at) row coalesces every deferred fire of the window into it).
 */
@Injectable()
export class MaintenanceGate {
  private readonly logger = new Logger(MaintenanceGate.name);

  constructor(
    private readonly watch: MaintenanceWatch,
    private readonly writer: FireWriter,
    private readonly outcomes: AttemptOutcomes,
  ) {}

  /** Whether any maintenance window is known (else {@link apply} has nothing to do: callers skip the call). */
  get any(): boolean {
    return this.watch.any;
  }

  /** The recorded outcome when the fire falls in a window; null when it is to be delivered. */
  async apply(attempt: ClaimedAttempt, timer: Pick<TimerEntity, 'app' | 'id'>): Promise<FireResult | null> {
    if (!this.watch.any) return null;
    const { msg } = attempt;
    const hit = this.watch.covering(timer.app, msg.timerId, msg.runAt);
    if (!hit) return null;
    if (hit.window.policy === 'skip') return this.outcomes.missed(attempt, 'maintenance', 'skipped: maintenance');
    // The deferred fire is written before this one is settled: should the process die between, the
    // row at the window's end exists and this fire is redelivered and deferred again (idempotent).
    const written = await this.writer.write([{ app: timer.app, timerId: msg.timerId, runAt: hit.end }]);
    const result = await this.outcomes.missed(attempt, 'maintenance', `deferred: maintenance, to ${hit.end}`);
    if (written.due.length > 0) await this.writer.publishDue(written.due);
    if (written.inserted > 0) this.logger.log(`fire ${msg.fireId} deferred to the end of maintenance window ${hit.window.id} (${hit.end})`);
    return result;
  }
}
