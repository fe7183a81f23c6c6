import { mkdtempSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { run } from './run';

interface Sent {
  method: string;
  url: string;
  body: unknown;
}

/** Runs timerctl with a fetch that answers the queued replies and records what was sent. */
async function timerctl(line: string[], replies: { status: number; body: unknown }[]) {
  const sent: Sent[] = [];
  let out = '';
  let err = '';
  const fetch = (async (url: string, init: RequestInit) => {
    sent.push({ method: String(init.method), url, body: init.body ? JSON.parse(String(init.body)) : undefined });
    const r = replies.shift();
    if (!r) throw new TypeError('fetch failed');
    return new Response(JSON.stringify(r.body), { status: r.status, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof globalThis.fetch;
  const code = await run(line, { stdout: (s) => (out += s), stderr: (s) => (err += s), env: { TIMER_APP: 'billing', TIMER_URL: 'http://api' }, fetch });
  return { code, out, err, sent };
}

const TIMER = { id: 5, app: 'billing', name: 'n', cron: '* * * * *', runAt: null, every: null, timeZone: 'UTC', startAt: null, endAt: null, maxFires: null, status: 1, version: 3, createdAt: 1, notifyHTTPParam: { url: 'https://x.example/', method: 'POST' }, retryPolicy: { maxAttempts: 3, backoffMs: 1000 }, misfirePolicy: 'fire_late', nextFireTimes: [60_000] };
const EDITED = { code: 0, msg: 'ok', data: { id: 5, version: 4, changed: true, superseded: 0, fires: 0 } };

describe('timerctl run: requests and exit codes', () => {
  it('exit 1 for a refusal, naming the field; JSON on stderr with -o json', async () => {
    const refusal = { status: 400, body: { code: 40001, msg: 'cron must be 5 or 6 fields', requestId: 'r9' } };
    const table = await timerctl(['timers', 'create', '--name', 'n', '--cron', 'x', '--callback', 'https://x.example/', '--method', 'post'], [refusal]);
    expect(table).toMatchObject({ code: 1, out: '', err: 'timerctl: 400: cron must be 5 or 6 fields [field cron] (code 40001, request r9)\n' });
    expect(table.sent[0]).toEqual({ method: 'POST', url: 'http://api/api/timer/v1/def', body: { name: 'n', cron: 'x', notifyHTTPParam: { url: 'https://x.example/', method: 'post' }, app: 'billing' } });
    const json = await timerctl(['timers', 'get', '5', '-o', 'json'], [{ status: 404, body: { code: 40400, msg: 'timer not found', requestId: 'r1' } }]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.err)).toEqual({ error: { exit: 1, status: 404, code: 40400, message: 'timer not found', requestId: 'r1' } });
  });

  it('exit 3 for a 5xx and for an api that does not answer; 2 for a usage error before any request', async () => {
    expect((await timerctl(['timers', 'run', '5'], [{ status: 500, body: { code: 50000, msg: 'internal error', requestId: 'r' } }])).code).toBe(3);
    const down = await timerctl(['timers', 'list'], []);
    expect(down.code).toBe(3);
    expect(down.err).toMatch(/^timerctl: api unreachable: GET http:\/\/api\/api\/timer\/v1\/defs\?app=billing&pageIndex=1&pageSize=20: fetch failed/);
    const usage = await timerctl(['timers', 'get', 'abc'], []);
    expect(usage).toMatchObject({ code: 2, sent: [] });
    expect(usage.err).toContain('ID must be a positive whole number');
  });

  it('calendars: creates from flags, edits with PUT, deletes by name in the path; a timer takes --calendar and --on-excluded', async () => {
    const cal = { app: 'billing', name: 'de', timeZone: null, exclude: { dates: ['2026-12-24', { from: '2026-12-27', to: '2026-12-31' }], holidays: [{ country: 'DE', region: 'BY' }], weekdays: [6, 7] }, createdAt: 1, updatedAt: 1, timers: [] };
    const created = await timerctl(['calendars', 'create', 'de', '--date', '2026-12-24', '--date', '2026-12-27..2026-12-31', '--holiday', 'DE-BY', '--weekdays', '6,7'], [{ status: 200, body: { code: 0, msg: 'ok', data: cal } }]);
    expect(created.code).toBe(0);
    expect(created.sent[0]).toEqual({ method: 'POST', url: 'http://api/api/app/v1/calendars', body: { app: 'billing', name: 'de', exclude: cal.exclude } });
    expect(created.out).toContain('holidays DE-BY');
    const edited = await timerctl(['calendars', 'edit', 'de', '--holiday', 'AT', '--zone', 'Europe/Vienna'], [{ status: 200, body: { code: 0, msg: 'ok', data: { ...cal, regenerated: 2 } } }]);
    expect(edited.sent[0]).toEqual({ method: 'PUT', url: 'http://api/api/app/v1/calendars/de?app=billing', body: { timeZone: 'Europe/Vienna', exclude: { holidays: [{ country: 'AT' }] } } });
    expect(edited.out).toMatch(/^replaced calendar de \(2 timer\(s\) regenerated\)/);
    const inUse = await timerctl(['calendars', 'delete', 'de'], [{ status: 409, body: { code: 40900, msg: 'calendar "de" is used by 1 timer(s): 5 ("n")', requestId: 'r' } }]);
    expect(inUse).toMatchObject({ code: 1, sent: [{ method: 'DELETE', url: 'http://api/api/app/v1/calendars/de?app=billing' }] });
    expect(await timerctl(['calendars', 'create', 'de'], [])).toMatchObject({ code: 2, sent: [] });
    const timer = await timerctl(['timers', 'create', '--name', 'n', '--cron', '0 9 * * 1-5', '--callback', 'https://x.example/', '--method', 'POST', '--calendar', 'de', '--on-excluded', 'nextBusinessDay'], [{ status: 200, body: { code: 0, msg: 'ok', id: 5, version: 1 } }]);
    expect(timer.sent[0].body).toMatchObject({ calendars: ['de'], onExcluded: 'nextBusinessDay' });
  });

  it('dlq: replays the fires given; exit 4 from an api without the dead-letter API; 2 without a selector', async () => {
    const replayed = { code: 0, msg: 'ok', data: { replayed: 1, fireIds: ['5-1000'], notFound: ['5-2000'], remaining: 0 } };
    const ok = await timerctl(['dlq', 'replay', '--fire', '5-1000', '--fire', '5-2000'], [{ status: 200, body: replayed }]);
    expect(ok).toMatchObject({ code: 0, out: 'replayed 1 dead letter(s): 5-1000; not dead letters of billing: 5-2000\n' });
    expect(ok.sent[0]).toEqual({ method: 'POST', url: 'http://api/api/app/v1/dlq/replay', body: { app: 'billing', fireIds: ['5-1000', '5-2000'] } });
    const old = await timerctl(['dlq', 'list'], [{ status: 404, body: { code: 40401, msg: 'no route GET /api/app/v1/dlq', requestId: 'r' } }]);
    expect(old.code).toBe(4);
    expect(old.err).toMatch(/^timerctl: dlq list is not available: this api has no dead-letter API/);
    expect(await timerctl(['dlq', 'replay', '--all', '--timer', '5'], [])).toMatchObject({ code: 2, sent: [] });
  });

  it('edit: PATCHes the flags at the version it fetched, and tells a conflict apart', async () => {
    const ok = await timerctl(['timers', 'edit', '5', '--every', '90s'], [{ status: 200, body: { code: 0, msg: 'ok', data: TIMER } }, { status: 200, body: EDITED }]);
    expect(ok).toMatchObject({ code: 0, out: 'updated timer 5 to version 4 (0 pending fires superseded, 0 created)\n' });
    expect(ok.sent.map((s) => `${s.method} ${s.url}`)).toEqual(['GET http://api/api/timer/v1/def?id=5&app=billing', 'PATCH http://api/api/timer/v1/def']);
    expect(ok.sent[1].body).toEqual({ every: '90s', id: '5', app: 'billing', version: 3 });

    const stale = await timerctl(['timers', 'edit', '5', '--name', 'm', '--version', '2'], [{ status: 409, body: { code: 40901, msg: 'version 2 is not the current one', requestId: 'r', data: { version: 3 } } }]);
    expect(stale.code).toBe(1);
    expect(stale.sent).toHaveLength(1);
    expect(stale.err).toBe('timerctl: conflict: timer 5 was changed by someone else (you edited version 2, it is now at version 3); look at it again (timerctl timers get 5) and retry, or give --version 3 to overwrite\n');
  });

  it('edit --file: PUTs the file (a GET answer works) with the flags over it, at the file\'s version', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'timerctl-')), 'def.json');
    writeFileSync(file, JSON.stringify(TIMER));
    const r = await timerctl(['timers', 'edit', '5', '--file', file, '--cron', '0 * * * *', '--max-attempts', '5'], [{ status: 200, body: EDITED }]);
    expect(r.code).toBe(0);
    expect(r.sent).toHaveLength(1);
    // The view-only fields dropped; the cron flag replaces the schedule (the file's null runAt and every go).
    const { status: _s, createdAt: _c, nextFireTimes: _n, runAt: _r, every: _e, ...definition } = TIMER;
    expect(r.sent[0]).toEqual({ method: 'PUT', url: 'http://api/api/timer/v1/def', body: { ...definition, cron: '0 * * * *', retryPolicy: { maxAttempts: 5, backoffMs: 1000 }, id: '5', app: 'billing', version: 3 } });
  });

  it('create and edit: --failure-webhook with its headers; --no-failure-webhook sends null; a header without the URL is a usage error', async () => {
    const created = await timerctl(
      ['timers', 'create', '--name', 'n', '--cron', '* * * * *', '--callback', 'https://x.example/', '--failure-webhook', 'https://hooks.example/f', '--failure-webhook-header', 'Authorization: Bearer k'],
      [{ status: 200, body: { code: 0, msg: 'ok', id: 5, version: 1 } }],
    );
    expect(created.code).toBe(0);
    expect(created.sent[0].body).toMatchObject({ failureWebhook: { url: 'https://hooks.example/f', headers: { Authorization: ['Bearer k'] } } });
    const removed = await timerctl(['timers', 'edit', '5', '--no-failure-webhook', '--version', '3'], [{ status: 200, body: EDITED }]);
    expect(removed.code).toBe(0);
    expect(removed.sent[0].body).toEqual({ failureWebhook: null, id: '5', app: 'billing', version: 3 });
    expect(await timerctl(['timers', 'edit', '5', '--failure-webhook-header', 'A: b', '--version', '3'], [])).toMatchObject({ code: 2, sent: [] });
    expect(await timerctl(['timers', 'edit', '5', '--no-failure-webhook', '--failure-webhook', 'https://h.example/', '--version', '3'], [])).toMatchObject({ code: 2, sent: [] });
    expect(await timerctl(['timers', 'create', '--no-failure-webhook'], [])).toMatchObject({ code: 2, sent: [] });
  });

  it('create and edit: --result-webhook with its headers; --no-result-webhook sends null', async () => {
    const created = await timerctl(
      ['timers', 'create', '--name', 'n', '--cron', '* * * * *', '--callback', 'https://x.example/', '--result-webhook', 'https://hooks.example/r', '--result-webhook-header', 'X-Key: k'],
      [{ status: 200, body: { code: 0, msg: 'ok', id: 5, version: 1 } }],
    );
    expect(created.sent[0].body).toMatchObject({ resultWebhook: { url: 'https://hooks.example/r', headers: { 'X-Key': ['k'] } } });
    const removed = await timerctl(['timers', 'edit', '5', '--no-result-webhook', '--version', '3'], [{ status: 200, body: EDITED }]);
    expect(removed.sent[0].body).toEqual({ resultWebhook: null, id: '5', app: 'billing', version: 3 });
    expect(await timerctl(['timers', 'edit', '5', '--result-webhook-header', 'A: b', '--version', '3'], [])).toMatchObject({ code: 2, sent: [] });
  });

  it("overview: the app's last hour by default, every app with --all-apps, ISO times as epoch ms", async () => {
    const data = { app: 'billing', from: 0, to: 60_000, bucketMs: 60_000, now: 60_000, buckets: [], totals: { fires: 0, firesPerSecond: 0, delivered: 0, failed: 0, missed: 0, open: 0, latenessP50Ms: null, latenessP99Ms: null, latenessFires: 0, latenessCapped: false }, backlog: { pending: 0, capped: false, oldestRunAt: null } };
    const reply = { status: 200, body: { code: 0, msg: 'ok', data } };
    expect((await timerctl(['overview'], [reply])).sent[0].url).toBe('http://api/api/app/v1/overview?app=billing');
    const all = await timerctl(['overview', '--all-apps', '--from', '2026-01-01T00:00:00Z', '--bucket-ms', '1000'], [reply]);
    expect(all.sent[0].url).toBe(`http://api/api/app/v1/overview?from=${Date.parse('2026-01-01T00:00:00Z')}&bucketMs=1000`);
    expect(await timerctl(['overview', '--to', 'yesterday'], [])).toMatchObject({ code: 2, sent: [] });
  });
});
