import { Injectable, Logger } from '@nestjs/common';
import { TimerEntity } from '@timer/dal';
import { FireWriter } from '@timer/fire';
import { ClaimedAttempt } from '../shared/fire.types';
import { CallResult } from './call-result';
import { MaintenanceWatch } from './maintenance-watch.service';

type Deferred = NonNullable<Extract<CallResult, { kind: 'not-called' }>['deferred']>;

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
  ) {}

  /** Whether any maintenance window is known (else {@link apply} has nothing to do: callers skip the call). */
  get any(): boolean {
    return this.watch.any;
  }

  /**
   * The fire as missed when it falls in a window; null when it is to be delivered. The deferred fire
   * is written before this one is settled: should the process die between, the row at the window's
   * end exists and this fire is redelivered and deferred again (idempotent).
   */
  async apply(attempt: ClaimedAttempt, timer: Pick<TimerEntity, 'app' | 'id'>): Promise<CallResult | null> {
    if (!this.watch.any) return null;
    const { msg } = attempt;
    const hit = this.watch.covering(timer.app, msg.timerId, msg.runAt);
    if (!hit) return null;
    if (hit.window.policy === 'skip') return { kind: 'not-called', attempt, reason: 'maintenance', text: 'skipped: maintenance', latenessMs: null };
    const written = await this.writer.write([{ app: timer.app, timerId: msg.timerId, runAt: hit.end }]);
    const deferred = { due: written.due, inserted: written.inserted, windowId: hit.window.id, end: hit.end };
    return { kind: 'not-called', attempt, reason: 'maintenance', text: `deferred: maintenance, to ${hit.end}`, latenessMs: null, deferred };
  }

  /** Publishes a deferred fire due soon, once the fire it replaces is recorded. */
  async published({ msg }: ClaimedAttempt, deferred: Deferred): Promise<void> {
    if (deferred.due.length > 0) await this.writer.publishDue(deferred.due);
    if (deferred.inserted > 0) this.logger.log(`fire ${msg.fireId} deferred to the end of maintenance window ${deferred.windowId} (${deferred.end})`);
  }
}
