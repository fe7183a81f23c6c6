import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pollUntil, shortId, Stack } from '../support';

// Two migrator processes over the real broker, MariaDB and Redis: a window with more enabled timers
// than TIMER_MIGRATOR_RANGE_TIMERS is split into range messages on timer-migrate-ranges, both
// replicas take some, and every fire of the current and next two windows exists exactly once.
jest.setTimeout(180_000);

const TIMERS = 2_400;
const RANGE = 200;
const WINDOW_MINUTES = 10;

describe('migrator windows split across two replicas', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await Stack.start({
      id: shortId('ranges'),
      roles: ['migrator'],
      // Both replicas healthy (Stack.start waits for each) means both consume timer-migrate-ranges
      // (they subscribe before serving HTTP); only then do the windows get timers, so neither can
      // take every range before the other has started.
      replicas: { migrator: 2 },
      env: {
        TIMER_WINDOW_MINUTES: String(WINDOW_MINUTES),
        TIMER_MIGRATOR_RANGE_TIMERS: String(RANGE),
        TIMER_MIGRATOR_PAGE_SIZE: '50',
        TIMER_MIGRATOR_TICK_MS: '2000',
      },
    });
    // The start-up ticks have completed the (empty) current and next two windows.
    const settled = await pollUntil(async () => Number((await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM migrator_windows'))[0].n) >= 3, 60_000, 250);
    expect(settled).toBe(true);
    await stack.sql('INSERT IGNORE INTO apps (app) VALUES (?)', ['ranges']);
    const hook = JSON.stringify({ url: 'http://127.0.0.1:1/hook', method: 'POST' });
    // Their next fire: the first window's start (none of their fires exists yet), so the windows
    // migrated again below read them; a tick in between leaves a known next fire alone.
    const [{ first }] = await stack.sql<{ first: number }>('SELECT MIN(window_start) AS first FROM migrator_windows');
    const rows = Array.from({ length: TIMERS }, (_, k) => ['ranges', `t${k}`, `t${k}`, '0 * * * * *', 'UTC', hook, 2, Number(first)]);
    await stack.sql('INSERT INTO timers (app, name, live_name, cron, time_zone, notify_http_param, status, next_fire_at) VALUES ?', [rows]);
    // Created long ago, so the current window gets its fires from its start (not from "enabled now").
    await stack.sql('UPDATE timers SET updated_at = NOW(3) - INTERVAL 1 DAY');
    // The windows completed empty at start-up: forget them, and the next tick (2 s) migrates them again.
    await stack.sql('DELETE FROM migrator_windows');
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('creates every fire of three windows once, with ranges worked by both processes', async () => {
    const windowMs = WINDOW_MINUTES * 60_000;
    const done = await pollUntil(async () => {
      const [r] = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM migrator_windows');
      return Number(r.n) >= 3;
    }, 150_000, 500);
    expect(done).toBe(true);
    const windows = await stack.sql<{ window_start: number }>('SELECT window_start FROM migrator_windows ORDER BY window_start');
    const first = Number(windows[0].window_start);
    const last = Number(windows[windows.length - 1].window_start) + windowMs;
    // Every minute of the three windows, for every timer; no duplicates (unique key) and no gaps.
    const [count] = await stack.sql<{ n: number; timers: number; minutes: number }>(
      'SELECT COUNT(*) AS n, COUNT(DISTINCT timer_id) AS timers, COUNT(DISTINCT run_at) AS minutes FROM tasks WHERE run_at >= ? AND run_at < ?',
      [first, last],
    );
    const minutes = (last - first) / 60_000;
    expect(Number(count.timers)).toBe(TIMERS);
    expect(Number(count.minutes)).toBe(minutes);
    expect(Number(count.n)).toBe(TIMERS * minutes);

    const ranges = (out: string) => (out.match(/range \(\d+, (\d+|end)\]/g) ?? []).length;
    const firstLog = readFileSync(join(stack.logDir, 'migrator.log'), 'utf8');
    const mine = ranges(firstLog);
    const secondLog = readFileSync(join(stack.logDir, 'migrator-2.log'), 'utf8');
    const theirs = ranges(secondLog);
    process.stdout.write(`ranges worked: first process ${mine}, second process ${theirs} (of ${3 * (TIMERS / RANGE)})\n`);
    expect(mine + theirs).toBeGreaterThanOrEqual(3 * (TIMERS / RANGE));
    expect(mine).toBeGreaterThan(0);
    expect(theirs).toBeGreaterThan(0);
    expect(firstLog + secondLog).toMatch(/split into 12 ranges of 200 timers/);
  });
});
