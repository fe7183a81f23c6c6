import { Clock } from '@timer/platform';
import { FireLane } from './fire-lanes';
import { InstantWaits } from '../shared/instant-waits';

/** A fire takes its lane slot this long before run_at: time for its claim (a batched UPDATE) before its call. */
export const SLOT_LEAD_MS = 100;
/**
 * ... and this long before it when its lane has a slot for every fire due at that instant. The
 * look-ups, claims and call marks of a busy instant can take most of SLOT_LEAD_MS, so some would end
 * after the instant and the call wait for them (docs/benchmarks.md, "Measurements behind the code");
 * the trigger publishes 500 ms ahead, so the fires are here by then. At most EARLY_CALL_MARK_MS, so a
 * claimed fire still marks its call during its wait rather than at the instant.
 */
export const ROOMY_SLOT_LEAD_MS = 250;

/**
 * When a fire due soon takes its lane slot: {@link ROOMY_SLOT_LEAD_MS} before run_at when the lane
 * has room then for every fire waiting for that instant, else {@link SLOT_LEAD_MS} before it, so that
 * when more fires are due at once than the lane has slots no slot sits idle while
 * its fire waits for its time. The first fire released at the early point decides for its instant.
 */
export class SlotLeads {
  /** By lane and instant: fires waiting to take a slot, and the decision once made. */
  private readonly instants = new Map<FireLane, Map<number, { waiting: number; early?: boolean }>>();

  constructor(
    private readonly waits: InstantWaits,
    private readonly clock: Clock,
  ) {}

  /** Resolves when the fire due at `runAt` may take its slot of `lane`; `group`: its app (InstantWaits' turns). */
  async until(lane: FireLane, runAt: number, group: string): Promise<void> {
    let byAt = this.instants.get(lane);
    if (!byAt) {
      byAt = new Map();
      this.instants.set(lane, byAt);
    }
    let instant = byAt.get(runAt);
    if (!instant) {
      instant = { waiting: 0 };
      byAt.set(runAt, instant);
    }
    instant.waiting++;
    try {
      const early = runAt - ROOMY_SLOT_LEAD_MS;
      if (early > this.clock.now()) await this.waits.until(early, group);
      instant.early ??= lane.inFlight + lane.queued + instant.waiting <= lane.size;
      if (!instant.early) await this.waits.until(runAt - SLOT_LEAD_MS, group);
    } finally {
      if (--instant.waiting === 0) byAt.delete(runAt);
    }
  }
}
