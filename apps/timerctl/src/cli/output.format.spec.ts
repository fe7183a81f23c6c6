import type { Attempt, Overview, TaskRecord, Timer } from '@timer/client';
import { formatOverview, formatPreview, formatRecords, formatTimer, formatTimerList, instant, table, zoned } from './output.format';

const timer = (over: Partial<Timer> = {}): Timer => ({
  id: 7,
  app: 'billing',
  name: 'nightly',
  cron: '30 2 * * *',
  runAt: null,
  every: null,
  timeZone: 'Europe/Berlin',
  startAt: null,
  endAt: null,
  maxFires: null,
  notifyHTTPParam: { url: 'https://hooks.example.com/t', method: 'POST', header: { 'X-A': ['1', '2'] }, body: '{"a":\n1}' },
  status: 2,
  retryPolicy: { maxAttempts: 3, backoffMs: 1000 },
  misfirePolicy: 'fire_late',
  // The fire policies at their defaults, as the api answers them.
  dstGap: 'shift',
  dstOverlap: 'first',
  overlapPolicy: 'allow',
  catchupPolicy: null,
  catchupWindowMs: null,
  jitterMs: 0,
  calendars: [],
  onExcluded: 'skip',
  autoSpread: false,
  spreadOffsetMs: null,
  failureWebhook: null,
  resultWebhook: null,
  version: 4,
  createdAt: Date.parse('2026-03-01T10:00:00Z'),
  ...over,
});

describe('timerctl output', () => {
  it('prints instants in UTC, without zero milliseconds, and in a zone with its offset', () => {
    expect(instant(Date.parse('2026-01-01T00:00:00Z'))).toBe('2026-01-01T00:00:00Z');
    expect(instant(Date.parse('2026-01-01T00:00:00.250Z'))).toBe('2026-01-01T00:00:00.250Z');
    expect(instant(null)).toBe('-');
    expect(zoned(Date.parse('2026-03-29T01:30:00Z'), 'Europe/Berlin').text).toBe('2026-03-29 03:30:00 GMT+02:00');
    expect(zoned(Date.parse('2026-03-29T00:30:00Z'), 'UTC').text).toBe('2026-03-29 00:30:00 GMT+00:00');
  });

  it('aligns table columns', () => {
    expect(table(['id', 'name'], [['1', 'a'], ['100', 'bb']])).toBe('ID   NAME\n1    a\n100  bb');
  });

  it('lists timers with their schedule and the range shown', () => {
    const out = formatTimerList({ data: [timer(), timer({ id: 8, cron: null, every: '5m', status: 1 }), timer({ id: 9, cron: null, runAt: Date.parse('2027-01-01T00:00:00Z'), status: 3 })], total: 23 }, 2, 3);
    expect(out.split('\n')).toEqual([
      'ID  NAME     STATUS     SCHEDULE                   ZONE           VERSION  CALLBACK',
      '7   nightly  enabled    cron 30 2 * * *            Europe/Berlin  4        POST https://hooks.example.com/t',
      '8   nightly  disabled   every 5m                   Europe/Berlin  4        POST https://hooks.example.com/t',
      '9   nightly  completed  once 2027-01-01T00:00:00Z  Europe/Berlin  4        POST https://hooks.example.com/t',
      '(4-6 of 23)',
    ]);
  });

  it('shows one timer with its headers, body on one line and next fires', () => {
    const out = formatTimer(timer({ nextFireTimes: [Date.parse('2026-03-29T00:30:00Z')], startAt: 0 }));
    expect(out).toContain('header      X-A: 1, 2');
    expect(out).toContain('body        {"a": 1}');
    expect(out).toContain('start at    1970-01-01T00:00:00Z');
    expect(out).toContain('next fires  2026-03-29T00:30:00Z');
    expect(out).not.toContain('end at');
  });

  it('marks the change of offset in the preview (DST)', () => {
    const out = formatPreview(timer({ cron: '30 * * * *', nextFireTimes: ['2026-03-29T00:30:00Z', '2026-03-29T01:30:00Z'].map(Date.parse) }));
    expect(out.split('\n')).toEqual([
      'timer 7 nightly: cron 30 * * * * in Europe/Berlin (enabled)',
      'EUROPE/BERLIN                  UTC',
      '2026-03-29 01:30:00 GMT+01:00  2026-03-29T00:30:00Z',
      '2026-03-29 03:30:00 GMT+02:00  2026-03-29T01:30:00Z  offset GMT+01:00 -> GMT+02:00',
    ]);
    expect(formatPreview(timer({ nextFireTimes: [] }))).toBe('timer 7 (cron 30 2 * * *) has no fire to come');
  });

  it('shows the preview route\'s DST flags with the wall time the cron named', () => {
    const at = Date.parse('2026-03-29T01:00:00Z');
    const out = formatPreview(timer(), [
      { at: at - 86_400_000, utc: '', local: '' },
      { at, utc: '', local: '', dst: 'shifted', nominal: '2026-03-29T02:30:00' },
    ]);
    expect(out.split('\n')[3]).toBe('2026-03-29 03:00:00 GMT+02:00  2026-03-29T01:00:00Z  shifted (2026-03-29 02:30:00), offset GMT+01:00 -> GMT+02:00');
  });

  it('lists records with status names, and "-" for what did not happen', () => {
    const out = formatRecords(
      {
        data: [
          { fireId: '7-1000', timerID: 7, app: 'a', runAt: 1000, status: 2, attempt: 1, httpStatus: 200, costMs: 12, latenessMs: 40, error: null, output: 'ok', backfill: false, attempts: [] },
          { fireId: '7-2000', timerID: 7, app: 'a', runAt: 2000, status: 4, attempt: 0, httpStatus: null, costMs: null, latenessMs: null, error: 'paused', output: null, backfill: false, attempts: [] },
        ],
        total: 2,
      },
      1,
      20,
    );
    expect(out.split('\n')).toEqual([
      'FIRE ID  RUN AT                STATUS     ATTEMPTS  HTTP  LATENESS  TOOK   ERROR   ANSWER',
      '7-1000   1970-01-01T00:00:01Z  succeeded  1         200   40 ms     12 ms  -       -',
      '7-2000   1970-01-01T00:00:02Z  missed     0         -     -         -      paused  -',
      '(1-2 of 2)',
    ]);
  });

  it("shows the last attempt's kept answer: its content type and the start of its body, marked when cut", () => {
    const attempt = (response: Attempt['response']): Attempt => ({ attempt: 1, startedAt: 1_000, httpStatus: 200, costMs: 3, error: null, response });
    const record = (attempts: Attempt[]): TaskRecord => ({ fireId: '7-1000', timerID: 7, app: 'a', runAt: 1000, status: 2, attempt: 1, httpStatus: 200, costMs: 12, latenessMs: 40, error: null, output: null, backfill: false, attempts });
    const answers = (attempts: Attempt[]) => formatRecords({ data: [record(attempts)], total: 1 }, 1, 20).split('\n')[1].replace(/.*12 ms +- +/, '');
    expect(answers([attempt({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":\n true}', truncated: false })])).toBe('application/json {"ok": true}');
    expect(answers([attempt(null), attempt({ status: 200, headers: {}, body: 'x'.repeat(10), truncated: true })])).toBe('xxxxxxxxxx…');
    expect(answers([attempt({ status: 204, headers: {}, body: '', truncated: false })])).toBe('(empty)');
    expect(answers([attempt(null)])).toBe('-');
  });

  it("shows a timer's own failure webhook and its headers", () => {
    const out = formatTimer(timer({ failureWebhook: { url: 'https://hooks.example.com/f', headers: { Authorization: ['Bearer k'] } } })).split('\n');
    expect(out).toContain('failure webhook  https://hooks.example.com/f');
    expect(out).toContain('  header         Authorization: Bearer k');
    expect(formatTimer(timer({ failureWebhook: null }))).not.toContain('failure webhook');
  });

  it("shows a timer's result webhook", () => {
    const out = formatTimer(timer({ resultWebhook: { url: 'https://hooks.example.com/r' } })).split('\n');
    expect(out.some((l) => /^result webhook +https:\/\/hooks\.example\.com\/r$/.test(l))).toBe(true);
    expect(formatTimer(timer())).not.toContain('result webhook');
  });

  it('prints the overview: the buckets with fires, the totals with the percentiles, the backlog', () => {
    const T = Date.parse('2026-01-01T10:00:00Z');
    const bucket = (i: number, fires: number) => ({ start: T + i * 60_000, end: T + (i + 1) * 60_000, fires, firesPerSecond: fires / 60, delivered: fires, failed: 0, missed: 0, open: 0, latenessP50Ms: fires ? 12 : null, latenessP99Ms: fires ? 40 : null });
    const o: Overview = {
      app: 'billing',
      from: T,
      to: T + 120_000,
      bucketMs: 60_000,
      now: T + 120_000,
      buckets: [bucket(0, 0), bucket(1, 6)],
      totals: { fires: 6, firesPerSecond: 0.05, delivered: 6, failed: 0, missed: 0, open: 0, latenessP50Ms: 12, latenessP99Ms: 40, latenessFires: 6, latenessCapped: false },
      backlog: { pending: 2, capped: false, oldestRunAt: T + 100_000 },
    };
    expect(formatOverview(o).split('\n')).toEqual([
      'app billing, 2026-01-01T10:00:00Z to 2026-01-01T10:02:00Z in buckets of 60 s',
      'BUCKET                FIRES/S  DELIVERED  FAILED  MISSED  OPEN  P50    P99',
      '2026-01-01T10:01:00Z  0.1      6          0       0       0     12 ms  40 ms',
      'total: 6 fires (0.05/s), 6 delivered, 0 failed, 0 missed, 0 open; lateness p50 12 ms, p99 40 ms over 6 delivered',
      'backlog: 2 pending past their time, the oldest due 2026-01-01T10:01:40Z',
    ]);
  });
});
