import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { TimerRepository } from '@timer/dal';
import { ExecutorLag } from '@timer/redis';
import { MigratorConfig, PaceConfig } from '../config/migrator.env';
import { MigratorMetrics } from './migrator.metrics';
import { isoWindow, Window } from './window-plan';

/** Rows buffered before they are written (a chunk at full speed), so a page of seconds-level timers never builds huge arrays. */
export const FLUSH_ROWS = 10_000;
/** The chunk while the executors are late: one INSERT of it holds MariaDB for tens of ms, not hundreds. */
export const MIN_CHUNK_ROWS = 1_000;
/** The estimated full-speed time of what is left counts this many times against the time left. */
export const PACE_SAFETY = 2;
/** The lag is read again at most this often (the executors report it every second). */
export const LAG_READ_MS = 250;
/** An expansion logs its progress this often while it runs. */
export const PROGRESS_LOG_MS = 10_000;
/** Share of the quiet part of a second a chunk is sized to fill (its time is an estimate). */
export const QUIET_FILL = 0.8;

export type PaceState = 'idle' | 'late' | 'deadline' | 'unpaced';

export interface PaceInput {
  now: number;
  /** Everything is to be written by then. */
  deadline: number;
  /** The executors' lag, null when none reported it lately. */
  lagMs: number | null;
  /** Estimated rows still to write. */
  remainingRows: number;
  /** Measured working time (pauses excluded) per row written so far. */
  msPerRow: number;
  /** The size of the chunk just written. */
  chunkRows: number;
}

export interface PaceStep {
  state: PaceState;
  /** Rows of the next chunk. */
  chunkRows: number;
  /** Pause before it. */
  pauseMs: number;
}

/**
 * What to do after a chunk: `unpaced` (full chunks, no pause) when the estimate of the rest is used
 * up (more timers than counted: it cannot vouch for the deadline); `deadline` (the same) once the
 * rest, at the speed measured so far times {@link PACE_SAFETY}, would no longer fit before the
 * deadline; `idle` (chunks growing back to {@link FLUSH_ROWS}, no pause) while the executors'
 * lag is at most `lagMs` or unknown; `late` otherwise: chunks of {@link MIN_CHUNK_ROWS} and the slack
 * spread evenly over the chunks left, at most `maxPauseMs` a pause. Halving the chunk step by step
 * wrote 10,000, 5,000 and 2,500 rows first: each a burst on the cores that deliver the fires.
 */
export function decidePace(input: PaceInput, limits: Pick<PaceConfig, 'lagMs' | 'maxPauseMs'>): PaceStep {
  const { now, deadline, lagMs, remainingRows, msPerRow, chunkRows } = input;
  const slackMs = deadline - now - remainingRows * msPerRow * PACE_SAFETY;
  if (remainingRows <= 0) return { state: 'unpaced', chunkRows: FLUSH_ROWS, pauseMs: 0 };
  if (slackMs <= 0) return { state: 'deadline', chunkRows: FLUSH_ROWS, pauseMs: 0 };
  if (limits.lagMs === 0 || lagMs === null || lagMs <= limits.lagMs) return { state: 'idle', chunkRows: Math.min(FLUSH_ROWS, chunkRows * 2), pauseMs: 0 };
  const chunksLeft = Math.ceil(remainingRows / MIN_CHUNK_ROWS);
  return { state: 'late', chunkRows: MIN_CHUNK_ROWS, pauseMs: Math.min(limits.maxPauseMs, Math.floor(slackMs / chunksLeft)) };
}

/** Whether the second has a quiet part at all (none: 0, or the whole second). */
function hasQuietPart({ quietForMs }: Pick<PaceConfig, 'quietForMs'>): boolean {
  return quietForMs > 0 && quietForMs < 1000;
}

/**
 * How long to wait from `now` for work of `workMs` to run inside the quiet part of a second
 * ({@link PaceConfig}); 0 when it fits now or there is no quiet part. Work longer than the quiet part
 * starts where it begins.
 */
export function quietWait(now: number, workMs: number, quiet: Pick<PaceConfig, 'quietAtMs' | 'quietForMs'>): number {
  if (!hasQuietPart(quiet)) return 0;
  const into = (((now - quiet.quietAtMs) % 1000) + 1000) % 1000;
  return into + Math.min(workMs, quiet.quietForMs) <= quiet.quietForMs ? 0 : 1000 - into;
}

export type LagSource = Pick<ExecutorLag, 'current'>;
export type DueCounter = Pick<TimerRepository, 'countDue'>;
export const LAG_SOURCE = Symbol('LAG_SOURCE');

/** Progress of an expansion: timers read and fires written so far. */
export interface ExpandProgress {
  timers: number;
  fires: number;
}

/**
 * Paces the expansions of windows against the executors' lag (docs/scaling.md, "Expansion beside
 * delivery"). Pacing only spaces the chunks out: what a chunk writes and when a timer's next fire
 * moves is the expansion's own business, so a crash at any moment leaves what it left before.
 */
@Injectable()
export class ExpansionPacer {
  private readonly logger = new Logger(ExpansionPacer.name);

  constructor(
    @Inject(LAG_SOURCE) private readonly lag: LagSource,
    @Inject(TimerRepository) private readonly due: DueCounter,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly config: MigratorConfig,
    private readonly metrics: MigratorMetrics,
  ) {}

  /**
   * Starts pacing the expansion of `window` (of a range of timer ids when given): its deadline is
   * TIMER_MIGRATOR_PACE_LEAD_MS before the window's start, at most TIMER_MIGRATOR_PACE_MAX_MS after
   * `from` (default: now). Null when pacing is off or the deadline has passed.
   */
  async begin(window: Window, ids?: { afterId: string | null; upToId?: string }, from?: number): Promise<PacedExpansion | null> {
    const pace = this.config.pace;
    if (pace.lagMs === 0) return null;
    const now = this.clock.now();
    const deadline = Math.min(window.start - pace.leadMs, (from ?? now) + pace.maxSpanMs);
    if (deadline <= now) return null;
    let dueTimers: number | null = null;
    try {
      dueTimers = await this.due.countDue(window.end, ids);
    } catch (e) {
      this.logger.warn(`window ${isoWindow(window)}: cannot count its timers, written at full speed: ${(e as Error).message}`);
    }
    const paced = new PacedExpansion(window, deadline, dueTimers, pace, this.clock, this.metrics, this.lag, this.logger);
    await paced.start();
    return paced;
  }
}

/** The pacing of one expansion: {@link beforeChunk} and {@link afterChunk} around each chunk. */
export class PacedExpansion {
  /** Rows of the next chunk. */
  chunkRows = FLUSH_ROWS;
  private state: PaceState | undefined;
  private readonly started: number;
  private pausedMs = 0;
  private lastLog: number;
  private lagRead: { at: number; lagMs: number | null } | undefined;
  private lagFailed = false;

  constructor(
    private readonly window: Window,
    private readonly deadline: number,
    /** Timers due in the window when it started (null: not known, no pacing). */
    private readonly dueTimers: number | null,
    private readonly limits: PaceConfig,
    private readonly clock: Clock,
    private readonly metrics: MigratorMetrics,
    private readonly lag: LagSource,
    private readonly logger: Logger,
  ) {
    this.started = clock.now();
    this.lastLog = this.started;
  }

  /** Before the first chunk: a window begun while the executors are late starts with the small chunk. */
  async start(): Promise<void> {
    if (this.dueTimers === null) return;
    const lagMs = await this.lagMs(this.clock.now());
    if (lagMs !== null && lagMs > this.limits.lagMs) this.chunkRows = MIN_CHUNK_ROWS;
  }

  /**
   * Before a chunk of `rows` is written: waits for the quiet part of the second where the chunk fits,
   * unless the deadline is near or the chunk is small (under {@link MIN_CHUNK_ROWS}); `checkpoint` after a wait.
   * Whole-second fires make the other roles' work come in bursts around each second; a chunk written
   * meanwhile delayed a whole second's calls (docs/scaling.md, "Expansion beside delivery").
   */
  async beforeChunk(rows: number, fires: number, checkpoint: () => void): Promise<void> {
    if (this.dueTimers === null || this.state === 'deadline' || this.state === 'unpaced' || rows < MIN_CHUNK_ROWS) return;
    const now = this.clock.now();
    const waitMs = quietWait(now, rows * this.msPerRow(now, fires), this.limits);
    if (waitMs <= 0) return;
    await this.clock.sleep(waitMs);
    const paused = this.clock.now() - now;
    this.pausedMs += paused;
    this.metrics.pacePaused.inc(paused / 1000);
    checkpoint();
  }

  /** After a chunk was written: sets the next chunk's size and pauses while the executors are late; `checkpoint` after a pause. */
  async afterChunk(progress: ExpandProgress, checkpoint: () => void): Promise<void> {
    const now = this.clock.now();
    const msPerRow = this.msPerRow(now, progress.fires);
    // Rows per timer so far (a timer cut by the chunk counts as none read yet: an overestimate).
    const remainingRows = this.dueTimers === null ? 0 : Math.max(0, this.dueTimers - progress.timers) * (progress.fires / Math.max(1, progress.timers));
    const lagMs = await this.lagMs(now);
    const step = decidePace({ now, deadline: this.deadline, lagMs, remainingRows, msPerRow, chunkRows: this.chunkRows }, this.limits);
    this.state = step.state;
    this.chunkRows = step.chunkRows;
    // A chunk that fits the quiet part of a second (beforeChunk waits for it).
    if ((step.state === 'idle' || step.state === 'late') && hasQuietPart(this.limits) && msPerRow > 0) {
      this.chunkRows = Math.min(this.chunkRows, Math.max(MIN_CHUNK_ROWS, Math.floor((this.limits.quietForMs * QUIET_FILL) / msPerRow)));
    }
    this.metrics.paceChunks.inc({ state: step.state });
    this.metrics.paceChunkRows.set(this.chunkRows);
    if (step.pauseMs > 0) {
      await this.clock.sleep(step.pauseMs);
      const paused = this.clock.now() - now;
      this.pausedMs += paused;
      this.metrics.pacePaused.inc(paused / 1000);
      checkpoint();
    }
    const at = this.clock.now();
    if (at - this.lastLog >= PROGRESS_LOG_MS) {
      this.lastLog = at;
      const of = this.dueTimers === null ? '' : ` of ~${this.dueTimers}`;
      this.logger.log(
        `window ${isoWindow(this.window)}: ${progress.fires} fires written, ${progress.timers}${of} timers read in ${Math.round((at - this.started) / 1000)} s ` +
          `(${Math.round(this.pausedMs / 1000)} s paused; executors' lag ${lagMs ?? '?'} ms, chunks of ${step.chunkRows} rows, ${step.state}; deadline in ${Math.round((this.deadline - at) / 1000)} s)`,
      );
    }
  }

  /** Time spent paused so far. */
  get paused(): number {
    return this.pausedMs;
  }

  /** Working time (pauses excluded) per fire written so far; 0 before the first chunk. */
  private msPerRow(now: number, fires: number): number {
    return fires > 0 ? Math.max(1, now - this.started - this.pausedMs) / fires : 0;
  }

  private async lagMs(now: number): Promise<number | null> {
    if (this.lagRead && now - this.lagRead.at < LAG_READ_MS) return this.lagRead.lagMs;
    let lagMs: number | null = null;
    try {
      lagMs = await this.lag.current(now);
      this.lagFailed = false;
    } catch (e) {
      // Without the signal the expansion writes at full speed, as it did before pacing.
      if (!this.lagFailed) this.logger.warn(`cannot read the executors' lag (writing at full speed): ${(e as Error).message}`);
      this.lagFailed = true;
    }
    if (lagMs !== null) this.metrics.executorLag.set(lagMs / 1000);
    this.lagRead = { at: now, lagMs };
    return lagMs;
  }
}
