import { ApiHarness } from './api-harness';

// GET /api/timer/v1/preview and the DST choices of a timer, over HTTP against the real api module
// (real MariaDB, Redis, Pulsar), with a fixed clock.
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';

describe('preview and DST choices (real api)', () => {
  const h = new ApiHarness();
  let appToken = '';

  beforeAll(async () => {
    await h.start();
    expect((await h.as().post('/api/app/v1/apps', { app: 'dst' })).body.code).toBe(0);
    appToken = (await h.as().post('/api/app/v1/tokens', { app: 'dst' })).body.data.token as string;
  });
  afterAll(() => h.stop());

  // `a=b&c=d` with each value encoded (spaces, `#`, `?` of cron expressions).
  const encode = (query: string) =>
    query
      .split('&')
      .filter((kv) => kv !== '')
      .map((kv) => kv.replace(/=(.*)$/, (_m, v: string) => `=${encodeURIComponent(v)}`))
      .join('&');
  const preview = (query: string, token?: string | null) => h.as(token).get(`/api/timer/v1/preview?${encode(query)}`);

  it('previews a gap and an overlap in Berlin with each choice, flagging the fires DST moved, doubled or took away', async () => {
    const gap = await preview('cron=30 2 * * *&timeZone=Europe/Berlin&from=2026-03-28T12:00:00Z&count=2');
    expect(gap.status).toBe(200);
    expect(gap.body.data).toEqual({
      timeZone: 'Europe/Berlin',
      fires: [
        { at: Date.parse('2026-03-29T01:00:00Z'), utc: '2026-03-29T01:00:00.000Z', local: '2026-03-29T03:00:00+02:00', dst: 'shifted', nominal: '2026-03-29T02:30:00' },
        { at: Date.parse('2026-03-30T00:30:00Z'), utc: '2026-03-30T00:30:00.000Z', local: '2026-03-30T02:30:00+02:00' },
      ],
    });
    // The README's example.
    const skipped = await preview('cron=30 2 * * *&timeZone=Europe/Berlin&from=2026-03-28T12:00:00Z&count=2&dstGap=skip');
    expect(skipped.body).toEqual({
      code: 0,
      msg: 'ok',
      data: {
        timeZone: 'Europe/Berlin',
        fires: [
          { at: 1774746000000, utc: '2026-03-29T01:00:00.000Z', local: '2026-03-29T03:00:00+02:00', dst: 'skipped', nominal: '2026-03-29T02:30:00' },
          { at: 1774830600000, utc: '2026-03-30T00:30:00.000Z', local: '2026-03-30T02:30:00+02:00' },
          { at: 1774917000000, utc: '2026-03-31T00:30:00.000Z', local: '2026-03-31T02:30:00+02:00' },
        ],
      },
    });
    const both = await preview('cron=30 2 * * *&timeZone=Europe/Berlin&from=2026-10-24T12:00:00Z&count=3&dstOverlap=both');
    expect(both.body.data.fires.map((f: { local: string; dst?: string }) => [f.local, f.dst])).toEqual([
      ['2026-10-25T02:30:00+02:00', undefined],
      ['2026-10-25T02:30:00+01:00', 'repeated'],
      ['2026-10-26T02:30:00+01:00', undefined],
    ]);
  });

  it('previews every and runAt, up to 1,000 fires, with any valid token and no app', async () => {
    h.clock.set('2026-06-01T10:00:00.300Z');
    const every = await preview('every=90s&count=2', appToken);
    expect(every.status).toBe(200);
    expect(every.body.data.fires.map((f: { utc: string }) => f.utc)).toEqual(['2026-06-01T10:00:01.000Z', '2026-06-01T10:01:31.000Z']);
    const once = await preview('runAt=2026-07-01T00:00:00Z&timeZone=America/New_York');
    expect(once.body.data.fires).toEqual([{ at: Date.parse('2026-07-01T00:00:00Z'), utc: '2026-07-01T00:00:00.000Z', local: '2026-06-30T20:00:00-04:00' }]);
    expect((await preview('cron=* * * * * *&count=1000')).body.data.fires).toHaveLength(1000);
    expect((await preview('cron=0 0 ? 2 1#5&timeZone=Asia/Kathmandu&count=1000&from=2026-01-01T00:00:00Z')).body.data.fires.map((f: { local: string }) => f.local).slice(0, 2)).toEqual([
      '2044-02-29T00:00:00+05:45',
      '2072-02-29T00:00:00+05:45',
    ]);
    expect((await preview('cron=* * * * *', null)).status).toBe(401);
  });

  it.each([
    ['cron=61 * * * *', /^cron/],
    ['cron=0 0 * * *&timeZone=Mars/Base', /^timeZone/],
    ['cron=0 0 * * *&dstGap=later', /dstGap/],
    ['cron=0 0 * * *&dstOverlap=last', /dstOverlap/],
    ['every=90s&dstGap=skip', /^dstGap/],
    ['runAt=2026-07-01T00:00:00Z&dstOverlap=both', /^dstOverlap/],
    ['every=1ms', /every/],
    ['cron=0 0 * * *&count=1001', /count/],
    ['cron=0 0 * * *&count=0', /count/],
    ['cron=0 0 * * *&from=yesterday', /from/],
    ['cron=0 0 * * *&startAt=2026-02-30T00:00:00Z', /startAt/],
    ['', /one of cron, runAt or every/],
    ['cron=0 0 * * *&every=1m', /every/],
    ['cron=0 0 * * *&calendars=weekend', /^app/],
    ['cron=0 0 * * *&name=dst', /name/],
  ])('refuses %s with a 400 naming the field', async (query, message) => {
    const res = await preview(query);
    expect(res.status).toBe(400);
    expect(res.body.msg).toMatch(message);
  });

  it('stores the DST choices of a cron timer, shows them in GET and the versions, and uses them for the preview in GET', async () => {
    h.clock.set('2026-10-24T12:00:00Z');
    const created = await h.as().post('/api/timer/v1/def', {
      app: 'dst',
      name: 'both',
      cron: '30 2 * * *',
      timeZone: 'Europe/Berlin',
      dstOverlap: 'both',
      notifyHTTPParam: { url: HOOK, method: 'POST' },
    });
    expect(created.body.code).toBe(0);
    const id = created.body.id as number;
    const got = (await h.as().get(`/api/timer/v1/def?app=dst&id=${id}`)).body.data;
    expect(got).toMatchObject({ dstGap: 'shift', dstOverlap: 'both' });
    expect(got.nextFireTimes.slice(0, 2)).toEqual([Date.parse('2026-10-25T00:30:00Z'), Date.parse('2026-10-25T01:30:00Z')]);

    const patched = await h.as().patch('/api/timer/v1/def', { app: 'dst', id, version: 1, dstGap: 'skip', dstOverlap: 'first' });
    expect(patched.body.data).toMatchObject({ changed: true, version: 2 });
    const versions = (await h.as().get(`/api/timer/v1/def/versions?app=dst&id=${id}`)).body.data as { version: number; dstGap: string; dstOverlap: string }[];
    expect(versions.map((v) => [v.version, v.dstGap, v.dstOverlap])).toEqual([
      [2, 'skip', 'first'],
      [1, 'shift', 'both'],
    ]);
    const refused = await h.as().patch('/api/timer/v1/def', { app: 'dst', id, version: 2, every: '1m', dstGap: 'skip' });
    expect(refused.status).toBe(400);
    expect(refused.body.msg).toMatch(/^dstGap/);
    expect((await h.as().get(`/api/timer/v1/def?app=dst&id=${id}`)).body.data).toMatchObject({ version: 2, cron: '30 2 * * *', dstGap: 'skip' });
    const badCreate = await h.as().post('/api/timer/v1/def', { app: 'dst', name: 'x', every: '1m', dstOverlap: 'both', notifyHTTPParam: { url: HOOK, method: 'POST' } });
    expect(badCreate.status).toBe(400);
    expect(badCreate.body.msg).toMatch(/^dstOverlap/);
    expect((await h.db.query("SELECT COUNT(*) AS n FROM timers WHERE app = 'dst'"))[0].n).toBe(1);
  });

  it('creates the fires each choice gives when a timer is enabled next to a DST change (Berlin overlap, New York gap)', async () => {
    const runAts = async (id: number) =>
      ((await h.db.query('SELECT run_at FROM tasks WHERE timer_id = ? ORDER BY run_at', [id])) as { run_at: number | string }[]).map((r) => new Date(Number(r.run_at)).toISOString());
    const enabled = async (name: string, timeZone: string, extra: object) => {
      const res = await h.as().post('/api/timer/v1/def', { app: 'dst', name, cron: '30 2 * * *', timeZone, ...extra, notifyHTTPParam: { url: HOOK, method: 'POST' } });
      const id = res.body.id as number;
      expect((await h.as().post('/api/timer/v1/enable', { app: 'dst', id })).body.code).toBe(0);
      return runAts(id);
    };
    // 2027-10-31: Berlin's 02:00-03:00 happens twice (CEST until 01:00Z, then CET); enable pre-creates 3 h.
    h.clock.set('2027-10-31T00:20:00Z');
    expect(await enabled('overlap-first', 'Europe/Berlin', {})).toEqual(['2027-10-31T00:30:00.000Z']);
    expect(await enabled('overlap-both', 'Europe/Berlin', { dstOverlap: 'both' })).toEqual(['2027-10-31T00:30:00.000Z', '2027-10-31T01:30:00.000Z']);
    // 2027-03-14: New York's 02:00-03:00 does not exist (EST until 07:00Z, then EDT).
    h.clock.set('2027-03-14T06:20:00Z');
    expect(await enabled('gap-shift', 'America/New_York', {})).toEqual(['2027-03-14T07:00:00.000Z']);
    expect(await enabled('gap-skip', 'America/New_York', { dstGap: 'skip' })).toEqual([]);
  });
});
