import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { MigratorConfig, MigratorEnv } from '../config/migrator.env';
import { decidePace, ExpansionPacer, FLUSH_ROWS, MIN_CHUNK_ROWS, PaceInput, QUIET_FILL, quietWait } from './expansion-pacer';
import { MigratorMetrics } from './migrator.metrics';

const LIMITS = { lagMs: 1_000, maxPauseMs: 1_000 };
/** 100,000 rows left at 0.04 ms a row: 4 s of work, 8 s with the safety; a minute to go. */
const BASE: PaceInput = { now: 0, deadline: 60_000, lagMs: 0, remainingRows: 100_000, msPerRow: 0.04, chunkRows: FLUSH_ROWS };

describe('decidePace', () => {
  it('writes full chunks without pause while the executors keep up (or say nothing)', () => {
    expect(decidePace(BASE, LIMITS)).toEqual({ state: 'idle', chunkRows: FLUSH_ROWS, pauseMs: 0 });
    expect(decidePace({ ...BASE, lagMs: null }, LIMITS).state).toBe('idle');
    expect(decidePace({ ...BASE, lagMs: 1_000 }, LIMITS).state).toBe('idle');
    // Chunks grow back after a late spell.
    expect(decidePace({ ...BASE, chunkRows: MIN_CHUNK_ROWS }, LIMITS).chunkRows).toBe(2 * MIN_CHUNK_ROWS);
  });

  it('writes the small chunk at once and pauses while they are late, spreading the slack over the chunks left', () => {
    // 52 s of slack over 100 chunks of 1,000 rows: 520 ms each.
    expect(decidePace({ ...BASE, lagMs: 5_000 }, LIMITS)).toEqual({ state: 'late', chunkRows: MIN_CHUNK_ROWS, pauseMs: 520 });
    expect(decidePace({ ...BASE, lagMs: 5_000, chunkRows: MIN_CHUNK_ROWS }, LIMITS).chunkRows).toBe(MIN_CHUNK_ROWS);
    // Capped at the longest pause.
    expect(decidePace({ ...BASE, lagMs: 5_000, deadline: 200_000 }, LIMITS).pauseMs).toBe(1_000);
    // 2 s of slack over 100 chunks: 20 ms each.
    expect(decidePace({ ...BASE, lagMs: 5_000, deadline: 10_000 }, LIMITS).pauseMs).toBe(20);
  });

  it('writes at full speed once the rest would not fit before the deadline, however late the executors', () => {
    const due = { state: 'deadline', chunkRows: FLUSH_ROWS, pauseMs: 0 };
    expect(decidePace({ ...BASE, lagMs: 60_000, deadline: 8_000 }, LIMITS)).toEqual(due);
    expect(decidePace({ ...BASE, lagMs: 60_000, now: 70_000 }, LIMITS)).toEqual(due);
    // An estimate used up (more timers than counted) cannot vouch for the deadline.
    expect(decidePace({ ...BASE, lagMs: 60_000, remainingRows: 0 }, LIMITS)).toEqual({ ...due, state: 'unpaced' });
  });

  it('never paces when pacing is off', () => {
    expect(decidePace({ ...BASE, lagMs: 60_000 }, { ...LIMITS, lagMs: 0 }).pauseMs).toBe(0);
  });
});

describe('quietWait', () => {
  const QUIET = { quietAtMs: 250, quietForMs: 500 };
  const T0 = 1_700_000_000_000;

  it('lets work start at once when it ends inside the quiet part of the second', () => {
    expect(quietWait(T0 + 250, 500, QUIET)).toBe(0);
    expect(quietWait(T0 + 400, 100, QUIET)).toBe(0);
    expect(quietWait(T0 + 649, 100, QUIET)).toBe(0);
  });

  it('waits for the next quiet part when the work would run past it or the second is busy', () => {
    expect(quietWait(T0 + 651, 100, QUIET)).toBe(599);
    expect(quietWait(T0, 10, QUIET)).toBe(250);
    expect(quietWait(T0 + 900, 10, QUIET)).toBe(350);
    expect(quietWait(T0 + 249, 0, QUIET)).toBe(1);
  });

  it('starts work longer than the quiet part where it begins', () => {
    expect(quietWait(T0 + 250, 2_000, QUIET)).toBe(0);
    expect(quietWait(T0 + 251, 2_000, QUIET)).toBe(999);
  });

  it('handles a quiet part across the whole second, and none', () => {
    const across = { quietAtMs: 800, quietForMs: 400 };
    expect(quietWait(T0 + 100, 50, across)).toBe(0);
    expect(quietWait(T0 + 190, 50, across)).toBe(610);
    expect(quietWait(T0 + 500, 1_000, { quietAtMs: 250, quietForMs: 0 })).toBe(0);
    expect(quietWait(T0 + 500, 1_000, { quietAtMs: 0, quietForMs: 1_000 })).toBe(0);
  });
});

describe('ExpansionPacer', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  const WINDOW = { start: 600_000, end: 660_000 };

  function pacer(lag: () => Promise<number | null>, env: Partial<MigratorEnv> = {}) {
    const clock = { t: 0, now: () => clock.t, sleep: async (ms: number) => void (clock.t += ms) };
    const metrics = new MigratorMetrics(new Registry());
    const config = new MigratorConfig(Object.assign(new MigratorEnv(), env));
    const counter = { countDue: jest.fn(async () => 100) };
    return { clock, metrics, counter, pacer: new ExpansionPacer({ current: lag }, counter, clock, config, metrics) };
  }

  /** Runs `chunks` chunks of 1,000 fires of 10 timers each, each taking `workMs`. */
  async function run(p: ReturnType<typeof pacer>, chunks: number, workMs = 50) {
    const paced = (await p.pacer.begin(WINDOW))!;
    const sizes: number[] = [];
    for (let i = 1; i <= chunks; i++) {
      p.clock.t += workMs;
      await paced.afterChunk({ timers: 10 * i, fires: 1_000 * i }, () => undefined);
      sizes.push(paced.chunkRows);
    }
    return { paced, sizes };
  }

  it('pauses while the executors report a lag, and counts the pause and the chunks', async () => {
    const p = pacer(async () => 4_000);
    const { paced, sizes } = await run(p, 5);
    expect(p.counter.countDue).toHaveBeenCalledWith(WINDOW.end, undefined);
    expect(paced.paused).toBeGreaterThan(0);
    expect(sizes[sizes.length - 1]).toBe(MIN_CHUNK_ROWS);
    const paused = (await p.metrics.pacePaused.get()).values[0].value;
    expect(paused * 1000).toBeCloseTo(paced.paused);
    const late = (await p.metrics.paceChunks.get()).values.find((v) => v.labels.state === 'late');
    expect(late?.value).toBe(5);
  });

  it('starts a window begun while the executors are late with the small chunk', async () => {
    expect((await pacer(async () => 4_000).pacer.begin(WINDOW))!.chunkRows).toBe(MIN_CHUNK_ROWS);
    expect((await pacer(async () => 40).pacer.begin(WINDOW))!.chunkRows).toBe(FLUSH_ROWS);
    expect((await pacer(async () => null).pacer.begin(WINDOW))!.chunkRows).toBe(FLUSH_ROWS);
  });

  it('writes at full speed when the lag cannot be read or the timers cannot be counted', async () => {
    const failing = pacer(async () => {
      throw new Error('redis down');
    });
    expect((await run(failing, 3)).paced.paused).toBe(0);
    const uncounted = pacer(async () => 4_000);
    uncounted.counter.countDue.mockRejectedValue(new Error('mysql down'));
    expect((await run(uncounted, 3)).paced.paused).toBe(0);
  });

  it('waits for the quiet part of the second before a chunk, and sizes chunks to fit it', async () => {
    const p = pacer(async () => 40);
    p.clock.t = 100_000;
    const paced = (await p.pacer.begin(WINDOW))!;
    // The first chunk, at a whole second: waits 250 ms for the quiet part.
    await paced.beforeChunk(FLUSH_ROWS, 0, () => undefined);
    expect(p.clock.t).toBe(100_250);
    expect(paced.paused).toBe(250);
    // 10,000 rows in 300 ms of work: 0.03 ms a row, so a chunk fills 80% of the 500 ms quiet part in 13,333 rows.
    p.clock.t += 300;
    await paced.afterChunk({ timers: 10, fires: FLUSH_ROWS }, () => undefined);
    expect(paced.chunkRows).toBe(FLUSH_ROWS);
    // Slower rows (0.1 ms): a chunk of 4,000.
    p.clock.t += 1_700;
    await paced.afterChunk({ timers: 20, fires: 2 * FLUSH_ROWS }, () => undefined);
    expect(paced.chunkRows).toBe(Math.floor((500 * QUIET_FILL) / 0.1));
    // A small chunk runs at once, wherever in the second.
    p.clock.t = 102_900;
    await paced.beforeChunk(MIN_CHUNK_ROWS - 1, 2 * FLUSH_ROWS, () => undefined);
    expect(p.clock.t).toBe(102_900);
    const waited = (await p.metrics.pacePaused.get()).values[0].value;
    expect(waited * 1000).toBeCloseTo(paced.paused);
  });

  it('writes chunks at any time near the deadline or with no quiet part', async () => {
    const near = pacer(async () => 40);
    const paced = (await near.pacer.begin(WINDOW))!;
    // Begun at 0, its deadline is 30 s later (TIMER_MIGRATOR_PACE_MAX_MS): 10 of 100 timers written by 29 s leave no slack.
    near.clock.t = 29_000;
    await paced.afterChunk({ timers: 10, fires: 100 }, () => undefined);
    const at = near.clock.t;
    await paced.beforeChunk(FLUSH_ROWS, 100, () => undefined);
    expect(near.clock.t).toBe(at);
    const none = pacer(async () => 40, { TIMER_MIGRATOR_PACE_QUIET_FOR_MS: 0 });
    const unquiet = (await none.pacer.begin(WINDOW))!;
    await unquiet.beforeChunk(FLUSH_ROWS, 0, () => undefined);
    expect(none.clock.t).toBe(0);
  });

  it('does not pace past its deadline, nor when pacing is off', async () => {
    const short = pacer(async () => 4_000, { TIMER_MIGRATOR_PACE_MAX_MS: 0 });
    expect(await short.pacer.begin(WINDOW)).toBeNull();
    expect(short.counter.countDue).not.toHaveBeenCalled();
    const late = pacer(async () => 4_000);
    late.clock.t = WINDOW.start - 30_000;
    expect(await late.pacer.begin(WINDOW)).toBeNull();
    expect(await pacer(async () => 4_000, { TIMER_MIGRATOR_PACE_LAG_MS: 0 }).pacer.begin(WINDOW)).toBeNull();
  });
});
