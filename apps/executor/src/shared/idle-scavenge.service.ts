import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Clock, CLOCK } from '@timer/platform';
import { ExecutorConfig } from '../config/executor.env';

/**
 * Offset in each second of the scavenge: after the next instant's fires were claimed (from ~x.780 with
 * a whole second's slots) and before their calls (x.000), so the calls start with an empty young generation.
 */
export const IDLE_SCAVENGE_OFFSET_MS = 940;
/** The young generation is scavenged only when at least this full: an idle executor is left alone. */
export const IDLE_SCAVENGE_MIN_FILL = 0.25;

type Scavenge = () => void;
type YoungFill = () => number;

/** The next `offset` ms past a whole second after `now` (at least 50 ms ahead). */
export function nextIdleAt(now: number, offset = IDLE_SCAVENGE_OFFSET_MS): number {
  const at = Math.floor(now / 1000) * 1000 + offset;
  return at - now >= 50 ? at : at + 1000;
}

/** How full the young generation is (0-1). */
export const youngFill: YoungFill = () => {
  const s = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
  return s ? s.space_used_size / Math.max(1, s.space_used_size + s.space_available_size) : 0;
};

/** V8's minor collection on demand (`--expose-gc` set at run time; the function is taken from a fresh context). */
function exposedScavenge(): Scavenge {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: { type: 'minor' | 'major' }) => void;
  return () => gc({ type: 'minor' });
}

/**
 * Fires of whole-second schedules make the executor's work come in bursts at the instants (claims
 * from ~x.780 with a whole second's slots, calls at x.000, then completions and outcomes), and so
 * does its allocation: the young generation filled during a burst and its scavenge paused the event
 * loop right when a whole second's calls were going out, every one of them late by the pause
 * (docs/benchmarks.md, "Measurements behind the code"). Scavenging once a second, between the claims
 * of the next instant and its calls, empties it before each burst, so the pauses fall where no fire waits.
 * TIMER_EXECUTOR_IDLE_SCAVENGE=false turns it off.
 */
@Injectable()
export class IdleScavenge implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(IdleScavenge.name);
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly config: ExecutorConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.idleScavenge) return;
    this.start(exposedScavenge(), youngFill);
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Scavenges at {@link nextIdleAt} each second when the young generation is {@link IDLE_SCAVENGE_MIN_FILL} full. */
  start(scavenge: Scavenge, fill: YoungFill): void {
    const tick = (): void => {
      if (this.stopped) return;
      try {
        if (fill() >= IDLE_SCAVENGE_MIN_FILL) scavenge();
      } catch (e) {
        this.logger.warn(`idle scavenge failed, not tried again: ${(e as Error).message}`);
        return;
      }
      this.schedule(tick);
    };
    this.schedule(tick);
  }

  private schedule(tick: () => void): void {
    const now = this.clock.now();
    this.timer = setTimeout(tick, nextIdleAt(now) - now);
    this.timer.unref();
  }
}
