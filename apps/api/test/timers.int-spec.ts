import { gzipSync } from 'zlib';
import { ApiHarness } from './api-harness';

// The api module against real MariaDB, Redis and Pulsar, with a fixed clock (never sleeps).
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';
// Dates next year: the slice index expires keys by Redis's real clock, so the fixed clock must not lie in the past.
const Y = new Date().getUTCFullYear() + 1;
const at = (s: string) => Date.parse(`${Y}-${s}`);
/** Day of month of the n-th (1-based; -1 = last) Sunday of a month of year Y. */
function sunday(month: number, n: number): number {
  const days = new Date(Date.UTC(Y, month, 0)).getUTCDate();
  const sundays = Array.from({ length: days }, (_, i) => i + 1).filter((d) => new Date(Date.UTC(Y, month - 1, d)).getUTCDay() === 0);
  return n === -1 ? sundays[sundays.length - 1] : sundays[n - 1];
}
const dd = (d: number) => String(d).padStart(2, '0');

function timerBody(over: Record<string, unknown> = {}) {
  return { app: 'alpha', name: `t-${Math.random().toString(36).slice(2)}`, cron: '0 */10 * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' }, ...over };
}

describe('api timers (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness();
  const timers = () => h.count('SELECT COUNT(*) AS n FROM timers');
  const tasksOf = (id: number) => h.db.query('SELECT run_at FROM tasks WHERE timer_id = ? ORDER BY run_at', [id]) as Promise<{ run_at: string | number }[]>;
  const runAts = async (id: number) => (await tasksOf(id)).map((r) => Number(r.run_at));
  const indexOf = async (id: number) => (await h.indexEntries()).filter((e) => e.member.startsWith(`${id}-`));

  beforeAll(() => h.start());
  afterAll(() => h.stop());
  beforeEach(() => h.clock.set(at('06-01T10:00:00Z')));

  async function create(over: Record<string, unknown> = {}): Promise<number> {
    const res = await h.as().post('/api/timer/v1/def', timerBody(over));
    expect(res.body).toMatchObject({ code: 0, msg: 'ok' });
    expect(res.status).toBe(200);
    expect(typeof res.body.id).toBe('number');
    return res.body.id as number;
  }

  describe('create and get (seed 4.6.1, 4.6.5)', () => {
    it('creates a disabled timer and returns it with a preview of its next fires', async () => {
      const id = await create({
        name: 'report',
        cron: '0 30 9 * * *',
        timeZone: 'Europe/Berlin',
        notifyHTTPParam: { url: HOOK, method: 'post', header: { 'Content-Type': ['application/json'], 'X-One': 'single' }, body: '{"a":1}' },
        retryPolicy: { maxAttempts: 5, backoffMs: 2000 },
        misfirePolicy: 'skip',
      });
      const res = await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        code: 0,
        msg: 'ok',
        data: {
          id,
          app: 'alpha',
          name: 'report',
          cron: '0 30 9 * * *',
          runAt: null,
          timeZone: 'Europe/Berlin',
          notifyHTTPParam: { url: HOOK, method: 'POST', header: { 'Content-Type': ['application/json'], 'X-One': ['single'] }, body: '{"a":1}' },
          status: 1,
          retryPolicy: { maxAttempts: 5, backoffMs: 2000 },
          misfirePolicy: 'skip',
        },
      });
      // 09:30 in Berlin (CEST, UTC+2) is 07:30Z; "now" is 10:00Z, so the first is tomorrow.
      expect(res.body.data.nextFireTimes).toEqual([2, 3, 4, 5, 6].map((d) => at(`06-0${d}T07:30:00Z`)));
      expect(await h.count('SELECT COUNT(*) AS n FROM tasks WHERE timer_id = ?', [id])).toBe(0);
      expect(await h.count("SELECT COUNT(*) AS n FROM apps WHERE app = 'alpha'")).toBe(1);
    });

    it('keeps the body verbatim and accepts a one-shot given as ISO 8601 or epoch ms', async () => {
      const body = '  {"raw": "not re-encoded"}\n';
      const a = await create({ cron: undefined, runAt: `${Y}-06-01T12:30:00+02:00`, notifyHTTPParam: { url: HOOK, method: 'PUT', body } });
      const b = await create({ cron: undefined, runAt: String(at('06-01T10:45:00Z')) });
      const ga = await h.as().get(`/api/timer/v1/def?id=${a}&app=alpha`);
      expect(ga.body.data).toMatchObject({ cron: null, runAt: at('06-01T10:30:00Z'), notifyHTTPParam: { method: 'PUT', body } });
      expect(ga.body.data.nextFireTimes).toEqual([at('06-01T10:30:00Z')]);
      const gb = await h.as().get(`/api/timer/v1/def?id=${b}&app=alpha`);
      expect(gb.body.data).toMatchObject({ runAt: at('06-01T10:45:00Z') });
    });

    it('previews fires across a DST change in the timer\'s zone', async () => {
      // New York moves from EST (UTC-5) to EDT (UTC-4) on the second Sunday of March: 09:00 local is 14:00Z, then 13:00Z.
      const d = sunday(3, 2);
      h.clock.set(at(`03-${dd(d - 2)}T00:00:00Z`));
      const id = await create({ cron: '0 9 * * *', timeZone: 'America/New_York' });
      const res = await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`);
      expect(res.body.data.nextFireTimes).toEqual([
        at(`03-${dd(d - 2)}T14:00:00Z`),
        at(`03-${dd(d - 1)}T14:00:00Z`),
        at(`03-${dd(d)}T13:00:00Z`),
        at(`03-${dd(d + 1)}T13:00:00Z`),
        at(`03-${dd(d + 2)}T13:00:00Z`),
      ]);
    });

    it('rejects a duplicate name with 409 and allows it again once the first is deleted', async () => {
      const id = await create({ name: 'dup' });
      const again = await h.as().post('/api/timer/v1/def', timerBody({ name: 'dup' }));
      expect(again.status).toBe(409);
      expect(again.body.code).toBe(40900);
      expect(again.body.msg).toMatch(/dup/);
      expect((await h.as().delete('/api/timer/v1/def', { id, app: 'alpha' })).body.code).toBe(0);
      await create({ name: 'dup' });
      // Same name in another app is fine.
      await create({ name: 'dup', app: 'beta' });
    });

    it('answers 404 for an unknown id, a deleted timer, and another app\'s timer', async () => {
      const id = await create();
      for (const [q, why] of [
        [`id=999999&app=alpha`, 'unknown'],
        [`id=${id}&app=beta`, 'other app'],
      ]) {
        const res = await h.as().get(`/api/timer/v1/def?${q}`);
        expect({ why, status: res.status, code: res.body.code }).toEqual({ why, status: 404, code: 40400 });
      }
      for (const path of ['enable', 'unable', 'run']) {
        const res = await h.as().post(`/api/timer/v1/${path}`, { id, app: 'beta' });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
      expect((await h.as().delete('/api/timer/v1/def', { id, app: 'beta' })).status).toBe(404);
      expect((await h.as().get(`/api/task/v1/records?app=beta&timerID=${id}`)).status).toBe(404);
      await h.as().delete('/api/timer/v1/def', { id, app: 'alpha' });
      expect((await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`)).status).toBe(404);
      expect((await h.as().delete('/api/timer/v1/def', { id, app: 'alpha' })).status).toBe(404);
    });
  });

  describe('rejected input writes nothing', () => {
    const n = (over: Record<string, unknown>) => ({ url: HOOK, method: 'POST', ...over });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['missing app', { app: undefined }, /app/],
      ['bad app', { app: 'has space' }, /app/],
      ['missing name', { name: undefined }, /name/],
      ['empty name', { name: '' }, /name/],
      ['long name', { name: 'x'.repeat(256) }, /name/],
      ['control char in name', { name: 'a\nb' }, /name/],
      ['neither cron nor runAt', { cron: undefined }, /cron/],
      ['both cron and runAt', { runAt: at('06-02T00:00:00Z') }, /runAt/],
      ['invalid cron', { cron: '61 * * * *' }, /cron/],
      ['cron with 7 fields', { cron: '0 0 0 * * * 2026' }, /cron/],
      ['cron not a string', { cron: 5 }, /cron/],
      ['cron that never fires', { cron: '0 0 30 2 *' }, /cron/],
      ['unknown time zone', { timeZone: 'Mars/Olympus' }, /timeZone/],
      ['runAt garbage', { cron: undefined, runAt: 'tomorrow' }, /runAt/],
      ['runAt ISO without zone', { cron: undefined, runAt: '2026-06-02T10:00:00' }, /runAt/],
      ['runAt negative', { cron: undefined, runAt: -5 }, /runAt/],
      ['runAt in the past', { cron: undefined, runAt: at('06-01T09:59:59Z') }, /runAt/],
      ['runAt impossible date', { cron: undefined, runAt: `${Y}-02-30T10:00:00Z` }, /runAt .* is not a real date-time: day 30 does not exist/],
      ['runAt at T24:00', { cron: undefined, runAt: `${Y}-06-01T24:00:00Z` }, /runAt .* is not a real date-time: hour must be 00-23/],
      ['missing notifyHTTPParam', { notifyHTTPParam: undefined }, /notifyHTTPParam/],
      ['notifyHTTPParam not an object', { notifyHTTPParam: 'http://x' }, /notifyHTTPParam/],
      ['ftp url', { notifyHTTPParam: n({ url: 'ftp://example.com/x' }) }, /notifyHTTPParam\.url/],
      ['relative url', { notifyHTTPParam: n({ url: '/hook' }) }, /notifyHTTPParam\.url/],
      ['url not a string', { notifyHTTPParam: n({ url: 42 }) }, /notifyHTTPParam\.url/],
      ['loopback url', { notifyHTTPParam: n({ url: 'http://127.0.0.1:9000/x' }) }, /notifyHTTPParam\.url.*private/],
      ['private url', { notifyHTTPParam: n({ url: 'http://10.0.0.8/x' }) }, /notifyHTTPParam\.url/],
      ['link-local url', { notifyHTTPParam: n({ url: 'http://169.254.169.254/latest' }) }, /notifyHTTPParam\.url/],
      ['ipv6 loopback url', { notifyHTTPParam: n({ url: 'http://[::1]/x' }) }, /notifyHTTPParam\.url/],
      ['localhost url', { notifyHTTPParam: n({ url: 'http://localhost/x' }) }, /notifyHTTPParam\.url/],
      ['IPv4-compatible loopback url', { notifyHTTPParam: n({ url: 'http://[::127.0.0.1]/x' }) }, /notifyHTTPParam\.url.*private/],
      ['IPv4-compatible loopback url, hex', { notifyHTTPParam: n({ url: 'http://[::7f00:1]/x' }) }, /notifyHTTPParam\.url.*private/],
      ['6to4 loopback url', { notifyHTTPParam: n({ url: 'http://[2002:7f00:1::]/x' }) }, /notifyHTTPParam\.url.*private/],
      ['local-use NAT64 url', { notifyHTTPParam: n({ url: 'http://[64:ff9b:1::a00:1]/x' }) }, /notifyHTTPParam\.url.*private/],
      ['site-local url', { notifyHTTPParam: n({ url: 'http://[fec0::1]/x' }) }, /notifyHTTPParam\.url.*private/],
      ['IPv4-mapped loopback url, hex', { notifyHTTPParam: n({ url: 'http://[::ffff:7f00:1]/x' }) }, /notifyHTTPParam\.url.*private/],
      ['url with userinfo', { notifyHTTPParam: n({ url: 'http://user:pass@hooks.example.com/t' }) }, /notifyHTTPParam\.url must not contain credentials/],
      ['url with CR LF', { notifyHTTPParam: n({ url: 'https://hooks.example.com/t\r\nX-Injected: 1' }) }, /notifyHTTPParam\.url must not contain control characters/],
      ['url with TAB', { notifyHTTPParam: n({ url: 'https://hooks.exa\tmple.com/t' }) }, /notifyHTTPParam\.url must not contain control characters/],
      ['url with port 0', { notifyHTTPParam: n({ url: 'https://hooks.example.com:0/t' }) }, /notifyHTTPParam\.url must not use port 0/],
      ['bad method', { notifyHTTPParam: n({ method: 'CONNECT' }) }, /method/],
      ['missing method', { notifyHTTPParam: n({ method: undefined }) }, /method/],
      ['header name with space', { notifyHTTPParam: n({ header: { 'Bad Name': ['x'] } }) }, /notifyHTTPParam\.header/],
      ['header value with CRLF', { notifyHTTPParam: n({ header: { 'X-A': ['ok\r\nInjected: 1'] } }) }, /notifyHTTPParam\.header.*CR/],
      ['header value with LF', { notifyHTTPParam: n({ header: { 'X-A': ['a\nb'] } }) }, /notifyHTTPParam\.header/],
      ['header value not a string', { notifyHTTPParam: n({ header: { 'X-A': [1] } }) }, /notifyHTTPParam\.header/],
      ['header as array', { notifyHTTPParam: n({ header: [['X-A', 'b']] }) }, /notifyHTTPParam\.header/],
      ['reserved header', { notifyHTTPParam: n({ header: { Host: ['evil.example'] } }) }, /notifyHTTPParam\.header.*Host/],
      ['spoofed delivery header', { notifyHTTPParam: n({ header: { 'X-Timer-Signature': ['x'] } }) }, /notifyHTTPParam\.header/],
      ['body not a string', { notifyHTTPParam: n({ body: { a: 1 } }) }, /body/],
      ['body over the limit', { notifyHTTPParam: n({ body: 'x'.repeat(65_537) }) }, /notifyHTTPParam\.body/],
      ['unknown field', { status: 2 }, /status should not exist/],
      ['unknown nested field', { notifyHTTPParam: n({ timeout: 5 }) }, /timeout should not exist/],
      ['retry attempts above 10', { retryPolicy: { maxAttempts: 11 } }, /maxAttempts/],
      ['retry attempts 0', { retryPolicy: { maxAttempts: 0 } }, /maxAttempts/],
      ['unknown misfire policy', { misfirePolicy: 'later' }, /misfirePolicy/],
      ['unknown overlap policy', { overlapPolicy: 'forbid' }, /^overlapPolicy must be one of the following values: allow, skip, buffer_one/],
      ['unknown catch-up policy', { catchupPolicy: 'some' }, /^catchupPolicy must be one of the following values: all, latest, none/],
      ['negative catch-up window', { catchupWindowMs: -1 }, /^catchupWindowMs must not be less than 0/],
      ['jitter over an hour', { jitterMs: 3_600_001 }, /^jitterMs must not be greater than 3600000/],
      ['jitter as a string', { jitterMs: '5' }, /jitterMs must be an integer$/],
      ['both cron and every', { every: '90s' }, /^give exactly one of cron, runAt and every \(got cron and every\)$/],
      ['every "0s"', { cron: undefined, every: '0s' }, /^every must be at least 1s/],
      ['every over 366 days', { cron: undefined, every: '367d' }, /^every must be at most 366d/],
      ['endAt before startAt', { startAt: at('06-02T00:00:00Z'), endAt: at('06-01T23:00:00Z') }, /^endAt: endAt .* must be after startAt/],
      ['endAt passed', { endAt: at('06-01T09:00:00Z') }, /^endAt .* has passed/],
      ['no fire in [startAt, endAt]', { startAt: at('06-01T10:01:00Z'), endAt: at('06-01T10:09:00Z') }, /^endAt: no fire of the schedule lies in/],
      ['maxFires 0', { maxFires: 0 }, /maxFires must not be less than 1/],
      ['maxFires beyond a cron\'s limit', { maxFires: 1_001 }, /^maxFires: maxFires must be an integer from 1 to 1000 for a cron timer/],
      ['startAt on a one-shot', { cron: undefined, runAt: at('06-02T00:00:00Z'), startAt: at('06-01T11:00:00Z') }, /^startAt: startAt is only for cron and every timers/],
      ['maxFires on a one-shot', { cron: undefined, runAt: at('06-02T00:00:00Z'), maxFires: 1 }, /^maxFires is only for cron and every timers/],
      ['startAt not an instant', { startAt: '2030-01-01T00:00:00' }, /^startAt must be epoch milliseconds or an ISO 8601 date-time/],
    ];

    it.each(cases)('%s -> 400 naming the field', async (_why, over, field) => {
      const before = await timers();
      const res = await h.as().post('/api/timer/v1/def', timerBody({ name: 'rejected', ...over }));
      expect(res.status).toBe(400);
      expect(res.body.code).not.toBe(0);
      expect(res.body.code).toBeGreaterThanOrEqual(40000);
      expect(res.body.msg).toMatch(field);
      expect(typeof res.body.requestId).toBe('string');
      expect(await timers()).toBe(before);
    });

    it('accepts a body of exactly the limit', async () => {
      await create({ notifyHTTPParam: { url: HOOK, method: 'POST', body: 'é'.repeat(32_768) } });
    });

    it('answers malformed JSON, non-object JSON and oversize bodies with a 4xx envelope', async () => {
      const before = await timers();
      const raw = (body: string) => h.as().post('/api/timer/v1/def').set('Content-Type', 'application/json').send(body);
      const malformed = await raw('{"app": "alpha", "name": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ code: 40002, msg: 'malformed JSON body' });
      for (const body of ['null', '"text"', '42', '[]', '[{"app":"alpha"}]', '{}']) {
        const res = await raw(body);
        expect({ body, status: res.status, zero: res.body.code === 0 }).toEqual({ body, status: 400, zero: false });
      }
      const huge = await raw(JSON.stringify(timerBody({ notifyHTTPParam: { url: HOOK, method: 'POST', body: 'x'.repeat(300_000) } })));
      expect(huge.status).toBe(413);
      expect(huge.body.code).toBe(41300);
      const form = await h.as().post('/api/timer/v1/def').type('form').send('app=alpha&name=x&cron=*');
      expect(form.status).toBe(415);
      expect(await timers()).toBe(before);
    });

    it('answers a body that does not decompress, an unknown encoding and too deep JSON with a 4xx envelope', async () => {
      const before = await timers();
      // `serialize` keeps superagent from JSON-encoding the Buffer.
      const raw = (body: Buffer | string, encoding?: string) => {
        const r = h.as().post('/api/timer/v1/def').set('Content-Type', 'application/json');
        return (encoding ? r.set('Content-Encoding', encoding) : r).serialize((b: unknown) => b as string).send(body);
      };
      const valid = JSON.stringify(timerBody({ name: 'gzipped' }));
      expect((await raw(gzipSync(valid), 'gzip')).body).toMatchObject({ code: 0 });
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await raw(Buffer.from('definitely not compressed'), encoding);
        expect({ encoding, status: res.status, code: res.body.code }).toEqual({ encoding, status: 400, code: 40004 });
        expect(res.body.msg).toBe(`request body could not be decompressed (Content-Encoding "${encoding}")`);
      }
      const unknown = await raw(valid, 'zip9');
      expect(unknown.status).toBe(415);
      expect(unknown.body.msg).toMatch(/unsupported Content-Encoding "zip9"/);
      const deep = await raw(JSON.stringify(timerBody({ name: 'deep', retryPolicy: JSON.parse('['.repeat(100) + ']'.repeat(100)) })));
      expect(deep.status).toBe(400);
      expect(deep.body).toMatchObject({ code: 40005, msg: 'JSON body nested deeper than 64 levels' });
      const veryDeep = await raw(gzipSync(`{"app":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), 'gzip');
      expect(veryDeep.status).toBe(400);
      expect(veryDeep.body.code).toBe(40005);
      expect(await timers()).toBe(before + 1);
    });

    it('validates ids and queries', async () => {
      for (const q of ['id=abc&app=alpha', 'id=0&app=alpha', 'id=-1&app=alpha', 'app=alpha', 'id=1', 'id=1&app=alpha&extra=1', 'id=1&id=2&app=alpha']) {
        const res = await h.as().get(`/api/timer/v1/def?${q}`);
        expect({ q, status: res.status }).toEqual({ q, status: 400 });
        expect(res.body.code).toBe(40001);
      }
      for (const body of [{}, { id: 'x', app: 'alpha' }, { id: 1.5, app: 'alpha' }, { id: 1, app: 'alpha', more: 1 }, { id: true, app: 'alpha' }]) {
        const res = await h.as().post('/api/timer/v1/enable', body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
      }
    });

    it('answers unknown routes under /api with a 404 envelope', async () => {
      const res = await h.as().get('/api/timer/v1/nope');
      expect(res.status).toBe(404);
      expect(res.body.code).toBe(40401);
    });
  });

  describe('bounds and intervals', () => {
    it('anchors an interval at the creation rounded up to the second, shows it canonical, and pre-creates only fires within the bounds', async () => {
      h.clock.set(at('06-01T10:00:00.250Z'));
      const id = await create({ cron: undefined, every: '90s', endAt: at('06-01T10:06:00Z') });
      const got = await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`);
      expect(got.body.data).toMatchObject({ cron: null, runAt: null, every: '1m30s', startAt: at('06-01T10:00:01Z'), endAt: at('06-01T10:06:00Z'), maxFires: null });
      expect(got.body.data.nextFireTimes).toEqual([0, 1, 2, 3].map((k) => at('06-01T10:00:01Z') + k * 90_000));
      await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' }).expect(200);
      expect(await runAts(id)).toEqual([0, 1, 2, 3].map((k) => at('06-01T10:00:01Z') + k * 90_000));
    });

    it('counts maxFires from startAt; PATCH keeps the anchor, PUT without startAt re-anchors; list filters by completed', async () => {
      const id = await create({ cron: undefined, every: '1m', startAt: at('06-01T10:00:30Z'), maxFires: 3 });
      await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' }).expect(200);
      expect(await runAts(id)).toEqual([0, 1, 2].map((k) => at('06-01T10:00:30Z') + k * 60_000));
      const patched = await h.as().patch('/api/timer/v1/def').send({ id, app: 'alpha', version: 2, every: '2m' }).expect(200);
      expect(patched.body.data).toMatchObject({ version: 3, superseded: 1 });
      expect((await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`)).body.data).toMatchObject({ every: '2m', startAt: at('06-01T10:00:30Z'), maxFires: 3 });
      h.clock.set(at('06-01T10:00:40.5Z'));
      await h.as().put('/api/timer/v1/def').send({ ...timerBody({ name: 'renamed', cron: undefined, every: '2m' }), id, version: 3 }).expect(200);
      const put = await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`);
      expect(put.body.data).toMatchObject({ every: '2m', startAt: at('06-01T10:00:41Z'), maxFires: null, status: 2 });
      await h.db.query('UPDATE timers SET status = 3 WHERE id = ?', [id]);
      const listed = await h.as().get('/api/timer/v1/defs?app=alpha&status=3');
      expect(listed.body).toMatchObject({ total: 1, data: [{ id, status: 3 }] });
    });
  });

  describe('enable / unable (seed 4.6.2, 4.6.3)', () => {
    it('pre-creates the fires of the near future (TIMER_PRECREATE_SECONDS), once, however often it is enabled', async () => {
      h.clock.set(at('06-01T10:07:00Z'));
      const id = await create({ cron: '0 */10 * * * *' });
      const enable = () => h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
      const first = await enable();
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ code: 0, data: { changed: true, until: at('06-01T13:07:00Z') } });
      // [10:07, 13:07) (the harness's 3 hours): 10:10, 10:20, ... 13:00 = 18 fires.
      const expected = Array.from({ length: 18 }, (_, i) => at('06-01T10:10:00Z') + i * 600_000);
      expect(await runAts(id)).toEqual(expected);
      expect((await indexOf(id)).map((e) => e.score)).toEqual(expected);

      expect((await enable()).body).toMatchObject({ code: 0, data: { changed: false } });
      expect((await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' })).body.data).toMatchObject({ changed: true, removedFires: 18 });
      expect((await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`)).body.data.status).toBe(1);
      // A disabled timer costs nothing: its fires not yet due are gone from MySQL and the index.
      expect(await runAts(id)).toEqual([]);
      expect(await indexOf(id)).toEqual([]);
      expect((await enable()).body).toMatchObject({ code: 0, data: { changed: true } });
      expect(await runAts(id)).toEqual(expected);
      expect((await indexOf(id)).map((e) => e.score)).toEqual(expected);
      expect((await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`)).body.data.status).toBe(2);
      // Unable twice is fine too.
      expect((await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' })).body.code).toBe(0);
      expect((await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' })).body.code).toBe(0);
    });

    it('is safe under concurrent enables (row lock): one change, no duplicate rows', async () => {
      const id = await create({ cron: '*/30 * * * * *' });
      const results = await Promise.all(Array.from({ length: 5 }, () => h.as().post('/api/timer/v1/enable', { id: String(id), app: 'alpha' })));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(results.filter((r) => r.body.data.changed).length).toBe(1);
      // [10:00:00, 13:00:00) every 30 s; the one at 10:00:00 is due now: published at once, not indexed.
      expect((await runAts(id)).length).toBe(360);
      expect((await indexOf(id)).length).toBe(359);
    });

    it('pre-creates exact instants of a seconds-level cron', async () => {
      h.clock.set(at('06-01T12:59:41.500Z'));
      const id = await create({ cron: '*/15 * * * * *' });
      await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
      const fires = await runAts(id);
      expect(fires.slice(0, 3)).toEqual(['12:59:45', '13:00:00', '13:00:15'].map((t) => at(`06-01T${t}Z`)));
      expect(fires[fires.length - 1]).toBe(at('06-01T15:59:30Z'));
      expect(fires.length).toBe(1 + 3 * 60 * 4 - 1); // 12:59:45, then three hours at 4 per minute up to 15:59:41.5
    });

    it('pre-creates a one-shot fire at its exact instant, and refuses to enable one whose time has passed', async () => {
      const runAt = at('06-01T11:23:45.678Z');
      const id = await create({ cron: undefined, runAt });
      expect((await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' })).body.code).toBe(0);
      expect(await runAts(id)).toEqual([runAt]);
      expect((await indexOf(id)).map((e) => e.score)).toEqual([runAt]);

      const late = await create({ cron: undefined, runAt: at('06-01T10:05:00Z') });
      h.clock.set(at('06-01T10:06:00Z'));
      const res = await h.as().post('/api/timer/v1/enable', { id: late, app: 'alpha' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(40003);
      expect(res.body.msg).toMatch(/runAt/);
      expect(await runAts(late)).toEqual([]);
      expect((await h.as().get(`/api/timer/v1/def?id=${late}&app=alpha`)).body.data.status).toBe(1);

      const far = await create({ cron: undefined, runAt: at('07-01T00:00:00Z') });
      expect((await h.as().post('/api/timer/v1/enable', { id: far, app: 'alpha' })).body.data).toMatchObject({ changed: true, fires: 0 });
      expect(await runAts(far)).toEqual([]); // beyond the pre-created windows: the migrator's job
    });

    it('follows the timer\'s zone across the spring-forward gap (Europe/Berlin, last Sunday of March)', async () => {
      // 01:00Z: CET (UTC+1) becomes CEST (UTC+2); local 02:00..02:59 does not exist that night.
      const day = `03-${dd(sunday(3, -1))}`;
      h.clock.set(at(`${day}T00:00:00Z`));
      const hourly = await create({ cron: '0 * * * *', timeZone: 'Europe/Berlin' });
      const fixed = await create({ cron: '30 2 * * *', timeZone: 'Europe/Berlin' });
      await h.as().post('/api/timer/v1/enable', { id: hourly, app: 'alpha' });
      await h.as().post('/api/timer/v1/enable', { id: fixed, app: 'alpha' });
      // Every real hour keeps its fire: 01:00 CET, 03:00 CEST, 04:00 CEST.
      expect(await runAts(hourly)).toEqual(['00:00', '01:00', '02:00'].map((t) => at(`${day}T${t}:00Z`)));
      // 02:30 does not exist: fired once at the end of the gap (03:00 CEST = 01:00Z), per @timer/schedule's policy.
      expect(await runAts(fixed)).toEqual([at(`${day}T01:00:00Z`)]);
    });
  });

  describe('delete (seed 4.6.4)', () => {
    it('removes the timer and its pending fires from MySQL and the slice index', async () => {
      const id = await create({ cron: '0 * * * * *' });
      await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
      // 10:00:00 is due now: published at once, not indexed.
      expect((await runAts(id)).length).toBe(180);
      expect((await indexOf(id)).length).toBe(179);
      const other = await create({ cron: '0 * * * * *' });
      await h.as().post('/api/timer/v1/enable', { id: other, app: 'alpha' });

      const res = await h.as().delete('/api/timer/v1/def', { id, app: 'alpha' });
      expect(res.body).toEqual({ code: 0, msg: 'ok' });
      expect(await runAts(id)).toEqual([]);
      expect(await indexOf(id)).toEqual([]);
      expect((await runAts(other)).length).toBe(180);
      expect((await indexOf(other)).length).toBe(179);
      expect(await h.count('SELECT COUNT(*) AS n FROM timers WHERE id = ? AND deleted_at IS NOT NULL', [id])).toBe(1);
    });
  });

  describe('list and records', () => {
    it('pages the live timers of an app, newest first, with total and filters', async () => {
      const app = 'lister';
      const ids: number[] = [];
      for (const name of ['a-one', 'b-two', 'c-three']) ids.push(await create({ app, name }));
      await h.as().post('/api/timer/v1/enable', { id: ids[1], app });
      const page = (q: string) => h.as().get(`/api/timer/v1/defs?app=${app}${q}`);
      const all = await page('');
      expect(all.body).toMatchObject({ code: 0, total: 3 });
      expect(all.body.data.map((t: { id: number }) => t.id)).toEqual([...ids].reverse());
      const p1 = await page('&pageIndex=1&pageSize=2');
      const p2 = await page('&pageIndex=2&pageSize=2');
      expect(p1.body.data.map((t: { id: number }) => t.id)).toEqual([ids[2], ids[1]]);
      expect(p2.body.data.map((t: { id: number }) => t.id)).toEqual([ids[0]]);
      expect(p2.body.total).toBe(3);
      expect((await page('&pageIndex=3&pageSize=2')).body).toMatchObject({ data: [], total: 3 });
      expect((await page('&status=2')).body).toMatchObject({ total: 1, data: [{ id: ids[1], status: 2 }] });
      expect((await page('&status=1')).body.total).toBe(2);
      expect((await page('&name=two')).body).toMatchObject({ total: 1, data: [{ name: 'b-two' }] });
      await h.as().delete('/api/timer/v1/def', { id: ids[0], app });
      expect((await page('')).body.total).toBe(2);
      for (const q of ['&pageSize=101', '&pageSize=0', '&pageIndex=0', '&pageIndex=x', '&status=4', '&fuzzyName=x']) {
        expect({ q, status: (await page(q)).status }).toEqual({ q, status: 400 });
      }
      expect((await h.as().get('/api/timer/v1/defs')).status).toBe(400);
    });

    it('runs a timer now and lists its fire records', async () => {
      const id = await create({ cron: undefined, runAt: at('06-01T10:30:00Z') });
      const disabled = await h.as().post('/api/timer/v1/run', { id, app: 'alpha' });
      expect(disabled.status).toBe(409);
      await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
      h.clock.set(at('06-01T10:01:02.345Z'));
      const run = await h.as().post('/api/timer/v1/run', { id, app: 'alpha' });
      const now = at('06-01T10:01:02.345Z');
      expect(run.status).toBe(200);
      expect(run.body).toEqual({ code: 0, msg: 'ok', data: { fireId: `${id}-${now}`, runAt: now } });
      expect(await runAts(id)).toEqual([now, at('06-01T10:30:00Z')]);
      // Run now is behind the trigger's walk: its task message is published at once, not indexed.
      expect((await indexOf(id)).map((e) => e.score)).toEqual([at('06-01T10:30:00Z')]);

      // Future pending fires are listed only on request (past fires first by default).
      expect((await h.as().get(`/api/task/v1/records?app=alpha&timerID=${id}`)).body).toMatchObject({ code: 0, total: 1, data: [{ fireId: `${id}-${now}` }] });
      const records = await h.as().get(`/api/task/v1/records?app=alpha&timerID=${id}&includePending=true`);
      expect(records.status).toBe(200);
      expect(records.body).toMatchObject({ code: 0, total: 2 });
      expect(records.body.data.map((r: { fireId: string }) => r.fireId).sort()).toEqual([`${id}-${now}`, `${id}-${at('06-01T10:30:00Z')}`].sort());
      expect(records.body.data[0]).toMatchObject({ timerID: id, app: 'alpha', status: 0 });
      const paged = await h.as().get(`/api/task/v1/records?app=alpha&timerID=${id}&includePending=true&pageSize=1&pageIndex=2`);
      expect(paged.body).toMatchObject({ total: 2 });
      expect(paged.body.data).toHaveLength(1);
      expect((await h.as().get(`/api/task/v1/records?app=alpha&timerID=${id}&status=2`)).body).toMatchObject({ total: 0, data: [] });
      expect((await h.as().get(`/api/task/v1/records?app=alpha&timerID=${id}&status=9`)).status).toBe(400);
      expect((await h.as().get(`/api/task/v1/records?app=alpha&timerID=x`)).status).toBe(400);
    });
  });

  describe('internal errors', () => {
    it('answer 500 with a correlation id and nothing else', async () => {
      h.clock.fail = new Error('secret detail: password=hunter2');
      try {
        const res = await h.as().post('/api/timer/v1/def', timerBody()).set('X-Request-Id', 'corr-123');
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ code: 50000, msg: 'internal error', requestId: 'corr-123' });
        expect(res.headers['x-request-id']).toBe('corr-123');
        expect(JSON.stringify(res.body)).not.toMatch(/hunter2|secret/);
      } finally {
        h.clock.fail = undefined;
      }
    });
  });

  describe('open endpoints and OpenAPI', () => {
    it('serves health, metrics and docs without a token', async () => {
      expect((await h.http().get('/health/live')).status).toBe(200);
      expect((await h.http().get('/metrics')).status).toBe(200);
      const ui = await h.http().get('/api/docs');
      expect(ui.status).toBe(200);
      expect(ui.text).toMatch(/swagger/i);
    });

    it('lists every route with its schemas and bearer auth', async () => {
      const res = await h.http().get('/api/docs-json');
      expect(res.status).toBe(200);
      const doc = res.body as { paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>; components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> } };
      const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
      expect(routes.filter((r) => r.includes(' /api/')).sort()).toEqual(
        [
          'POST /api/timer/v1/def',
          'POST /api/timer/v1/def/batch',
          'GET /api/timer/v1/def',
          'PUT /api/timer/v1/def',
          'PATCH /api/timer/v1/def',
          'DELETE /api/timer/v1/def',
          'GET /api/timer/v1/def/versions',
          'POST /api/timer/v1/enable',
          'POST /api/timer/v1/unable',
          'GET /api/timer/v1/defs',
          'POST /api/timer/v1/run',
          'GET /api/task/v1/records',
          'POST /api/app/v1/apps',
          'GET /api/app/v1/apps',
          'POST /api/app/v1/tokens',
          'GET /api/app/v1/tokens',
          'DELETE /api/app/v1/tokens',
          'POST /api/app/v1/secret',
          'POST /api/app/v1/pause',
          'POST /api/app/v1/resume',
          'GET /api/app/v1/accounting',
          'GET /api/app/v1/overview',
          'PUT /api/app/v1/quota',
          'GET /api/app/v1/quota',
          'GET /api/app/v1/load',
          'POST /api/app/v1/maintenance',
          'GET /api/app/v1/maintenance',
          'DELETE /api/app/v1/maintenance',
          'POST /api/app/v1/calendars',
          'GET /api/app/v1/calendars',
          'GET /api/app/v1/calendars/{name}',
          'PUT /api/app/v1/calendars/{name}',
          'DELETE /api/app/v1/calendars/{name}',
          'GET /api/timer/v1/preview',
          'POST /api/timer/v1/backfill',
          'GET /api/app/v1/dlq',
          'POST /api/app/v1/dlq/replay',
          'POST /api/app/v1/dlq/purge',
          'PUT /api/app/v1/failure-webhook',
        ].sort(),
      );
      expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(routes).toEqual(expect.arrayContaining(['GET /health', 'GET /metrics']));
      expect(doc.paths['/health'].get.security).toBeUndefined();
      for (const [path, ops] of Object.entries(doc.paths)) {
        if (!path.startsWith('/api/')) continue;
        for (const op of Object.values(ops)) {
          expect(op.security).toEqual([{ bearer: [] }]);
          expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
        }
      }
      expect(Object.keys(doc.components.schemas)).toEqual(
        expect.arrayContaining(['CreateTimerDto', 'NotifyHttpParamDto', 'TimerView', 'ErrorEnvelope', 'UpdateTimerDto', 'PatchTimerDto', 'TimerVersionView']),
      );
      expect(doc.paths['/api/timer/v1/def'].post).toMatchObject({ requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateTimerDto' } } } } });
      expect(doc.paths['/api/timer/v1/def'].put).toMatchObject({ requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/UpdateTimerDto' } } } } });
      expect(doc.paths['/api/timer/v1/def'].patch).toMatchObject({ requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/PatchTimerDto' } } } } });
      expect(Object.keys(doc.paths['/api/timer/v1/def'].put.responses)).toEqual(expect.arrayContaining(['404', '409']));
      expect(JSON.stringify(doc.paths['/api/timer/v1/def'].post)).toContain('Idempotency-Key');
    });
  });
});
