import { ApiHarness } from './api-harness';

// Calendars over HTTP against real MariaDB, Redis and Pulsar, with a fixed clock (1 June next year, 10:00 UTC).
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';

describe('api calendars (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness();
  const T = h.clock.now();
  const day = new Date(T).toISOString().slice(0, 10);
  let betaToken = '';
  let alphaToken = '';

  beforeAll(async () => {
    await h.start();
    for (const app of ['alpha', 'beta']) expect((await h.as().post('/api/app/v1/apps', { app })).body.code).toBe(0);
    alphaToken = (await h.as().post('/api/app/v1/tokens', { app: 'alpha' })).body.data.token as string;
    betaToken = (await h.as().post('/api/app/v1/tokens', { app: 'beta' })).body.data.token as string;
  });
  afterAll(() => h.stop());

  const stored = () => h.count('SELECT COUNT(*) AS n FROM calendars');
  const post = (body: object, token?: string) => h.as(token).post('/api/app/v1/calendars', body);
  const timer = (body: object = {}) => h.as().post('/api/timer/v1/def', { app: 'alpha', name: `t-${Math.random()}`, cron: '0 */10 * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' }, ...body });

  it('refuses bad input with a 400 naming the field, other apps with 403, no token with 401; writes nothing', async () => {
    const ok = { app: 'alpha', name: 'days', exclude: { dates: ['2026-12-24'] } };
    const cases: [object, RegExp][] = [
      [{ ...ok, exclude: { holidays: [{ country: 'XX' }] } }, /^exclude\.holidays\[0\]\.country: .*unknown country "XX"/],
      [{ ...ok, exclude: { holidays: [{ country: 'DE', region: 'QQ' }] } }, /^exclude\.holidays\[0\]\.region: .*unknown region "QQ" of DE/],
      [{ ...ok, exclude: { dates: ['2026-02-30'] } }, /^exclude\.dates\[0\]: /],
      [{ ...ok, exclude: { dates: ['24.12.2026'] } }, /^exclude\.dates\[0\]: /],
      [{ ...ok, exclude: { dates: [{ from: '2026-12-31', to: '2026-12-24' }] } }, /^exclude\.dates\[0\]\.from: .* is after/],
      [{ ...ok, exclude: { weekdays: [0] } }, /^exclude\.weekdays\[0\]: /],
      [{ ...ok, exclude: { weekdays: [8] } }, /^exclude\.weekdays\[0\]: /],
      [{ ...ok, exclude: { weekend: true } }, /^exclude\.weekend: /],
      [{ ...ok, exclude: undefined }, /\bexclude\b/],
      [{ ...ok, timeZone: 'Mars/Olympus' }, /^timeZone: /],
      [{ ...ok, name: '-bad' }, /\bname\b/],
      [{ ...ok, extra: 1 }, /\bextra\b/],
    ];
    for (const [body, msg] of cases) {
      const res = await post(body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(res.body.msg).toMatch(msg);
    }
    expect((await post({ ...ok, app: 'nobody' })).status).toBe(404);
    expect((await post(ok, betaToken)).status).toBe(403);
    expect((await h.as(null).post('/api/app/v1/calendars', ok)).status).toBe(401);
    const tooMany = await post({ ...ok, exclude: { dates: Array.from({ length: 367 }, (_, i) => new Date(Date.UTC(2030, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)) } });
    expect([tooMany.status, tooMany.body.code]).toEqual([403, 40301]);
    expect(tooMany.body.msg).toMatch(/TIMER_QUOTA_MAX_CALENDAR_DATES 366/);
    expect(await stored()).toBe(0);
  });

  it('creates, lists and reads calendars per app; a name twice is a 409; another app sees none of them', async () => {
    const created = await post({ app: 'alpha', name: 'de-by', timeZone: 'Europe/Berlin', exclude: { holidays: [{ country: 'DE', region: 'BY' }], weekdays: [6, 7] } }, alphaToken);
    expect(created.body).toMatchObject({ code: 0, data: { app: 'alpha', name: 'de-by', timeZone: 'Europe/Berlin', exclude: { holidays: [{ country: 'DE', region: 'BY' }], weekdays: [6, 7] }, timers: [] } });
    expect((await post({ app: 'alpha', name: 'de-by', exclude: {} })).status).toBe(409);
    expect((await post({ app: 'beta', name: 'de-by', exclude: { dates: [{ from: '2026-12-24', to: '2026-12-26' }] } }, betaToken)).body.code).toBe(0);
    expect((await h.as(alphaToken).get('/api/app/v1/calendars?app=alpha')).body.data.map((c: { name: string }) => c.name)).toEqual(['de-by']);
    expect((await h.as(betaToken).get('/api/app/v1/calendars?app=alpha')).status).toBe(403);
    expect((await h.as(betaToken).get('/api/app/v1/calendars/de-by?app=alpha')).status).toBe(403);
    expect((await h.as(betaToken).get('/api/app/v1/calendars/de-by?app=beta')).body.data.exclude).toEqual({ dates: [{ from: '2026-12-24', to: '2026-12-26' }] });
    expect((await h.as().get('/api/app/v1/calendars/nope?app=alpha')).status).toBe(404);
    expect((await h.as().get('/api/app/v1/calendars/de-by')).status).toBe(400);
  });

  it('lets a timer refer only to calendars of its own app (400 naming calendars), and marks its excluded fires in GET', async () => {
    const unknown = await timer({ calendars: ['nope'] });
    expect([unknown.status, unknown.body.msg]).toEqual([400, expect.stringMatching(/^calendars: app alpha has no calendar named "nope"/)]);
    await post({ app: 'beta', name: 'beta-only', exclude: { weekdays: [1] } });
    expect((await timer({ calendars: ['beta-only'] })).status).toBe(400);
    expect((await timer({ calendars: ['de-by'], onExcluded: 'sometimes' })).body.msg).toMatch(/onExcluded must be one of skip, nextBusinessDay, previousBusinessDay/);

    await post({ app: 'alpha', name: 'today', exclude: { dates: [day] } });
    const id = (await timer({ calendars: ['today'], cron: '0 0 * * * *' })).body.id as number;
    const got = (await h.as().get(`/api/timer/v1/def?id=${id}&app=alpha`)).body.data;
    expect(got).toMatchObject({ calendars: ['today'], onExcluded: 'skip' });
    expect(got.calendar[0]).toEqual({ at: T + 3_600_000, calendar: 'today', excluded: true });
  });

  it('writes a fire on an excluded day missed with `calendar <name>`; a calendar edit regenerates the fires; a calendar in use cannot be deleted', async () => {
    const id = String((await timer({ name: 'hourly', cron: '0 0 * * * *', calendars: ['today'] })).body.id);
    expect((await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' })).body.code).toBe(0);
    const rows = async () =>
      (await h.db.query('SELECT run_at, status, error FROM tasks WHERE timer_id = ? ORDER BY run_at', [id])) as { run_at: string; status: number; error: string | null }[];
    // 10:00 to 12:00 (the near future), all on the excluded day: recorded missed, not indexed.
    expect((await rows()).map((r) => [Number(r.run_at) - T, r.status, r.error])).toEqual([
      [0, 4, 'calendar today'],
      [3_600_000, 4, 'calendar today'],
      [7_200_000, 4, 'calendar today'],
    ]);
    expect((await h.indexEntries()).filter((e) => e.member.startsWith(`${id}-`))).toEqual([]);

    const put = await h.as(alphaToken).put('/api/app/v1/calendars/today?app=alpha', { exclude: { dates: ['2020-01-01'] } });
    expect(put.body).toMatchObject({ code: 0, data: { name: 'today', regenerated: 2 } });
    // Pending again; the one due now is published, the later ones indexed.
    expect((await rows()).map((r) => [Number(r.run_at) - T, r.status, r.error])).toEqual([
      [0, 0, null],
      [3_600_000, 0, null],
      [7_200_000, 0, null],
    ]);
    expect((await h.indexEntries()).filter((e) => e.member.startsWith(`${id}-`)).length).toBe(2);
    // Each timer that uses it has a new version, made by the calendar's edit.
    const versions = (await h.as().get(`/api/timer/v1/def/versions?id=${id}&app=alpha`)).body.data as { version: number; change: string; calendars: string[] }[];
    expect(versions[0]).toMatchObject({ version: 3, change: 'calendar', calendars: ['today'] });
    expect((await h.as(betaToken).put('/api/app/v1/calendars/today?app=alpha', { exclude: {} })).status).toBe(403);
    expect((await h.as().put('/api/app/v1/calendars/today?app=alpha', { exclude: { holidays: [{ country: 'ZZ' }] } })).body.msg).toMatch(/^exclude\.holidays\[0\]\.country/);

    const del = await h.as().delete('/api/app/v1/calendars/today?app=alpha');
    expect(del.status).toBe(409);
    expect(del.body.msg).toMatch(new RegExp(`calendar "today" is used by 2 timer\\(s\\): .*${id} \\("hourly"\\)`));
    expect(del.body.data.timers).toContain(id);
    expect((await h.as(betaToken).delete('/api/app/v1/calendars/beta-only?app=beta')).body.code).toBe(0);
    expect((await h.as().delete('/api/app/v1/calendars/beta-only?app=beta')).status).toBe(404);
  });

  it('previews a schedule with the app\'s calendars, marking excluded and moved fires', async () => {
    await post({ app: 'alpha', name: 'weekend', exclude: { weekdays: [6, 7] } });
    const from = Date.parse('2027-07-30T00:00:00Z'); // the last day of July 2027 is a Saturday
    const q = `cron=${encodeURIComponent('0 9 L * *')}&from=${from}&count=2&app=alpha&calendars=weekend`;
    const skipped = (await h.as(alphaToken).get(`/api/timer/v1/preview?${q}`)).body.data.fires;
    expect(skipped[0]).toMatchObject({ utc: '2027-07-31T09:00:00.000Z', calendar: 'weekend', excluded: true });
    const moved = (await h.as(alphaToken).get(`/api/timer/v1/preview?${q}&onExcluded=nextBusinessDay`)).body.data.fires;
    expect(moved[0]).toMatchObject({ utc: '2027-08-02T09:00:00.000Z', calendar: 'weekend', movedFrom: Date.parse('2027-07-31T09:00:00Z') });
    expect((await h.as(betaToken).get(`/api/timer/v1/preview?${q}`)).status).toBe(403);
    expect((await h.as().get(`/api/timer/v1/preview?cron=0+9+*+*+*&calendars=weekend`)).body.msg).toMatch(/^app: /);
  });

  it('previews a dense schedule over a calendar that excludes every day: each fire marked excluded, never a 500', async () => {
    await post({ app: 'alpha', name: 'closed', exclude: { weekdays: [1, 2, 3, 4, 5, 6, 7] } });
    await post({ app: 'alpha', name: 'nearly', exclude: { dates: [{ from: '2027-01-01', to: '2027-12-19' }, { from: '2027-12-21', to: '2027-12-31' }] } });
    const from = Date.parse('2027-03-01T00:00:00Z');
    const everySecond = `cron=${encodeURIComponent('* * * * * *')}&timeZone=Europe%2FBerlin&from=${from}&app=alpha`;
    for (const onExcluded of ['skip', 'nextBusinessDay', 'previousBusinessDay']) {
      const res = await h.as(alphaToken).get(`/api/timer/v1/preview?${everySecond}&count=1000&calendars=closed&onExcluded=${onExcluded}`);
      expect([onExcluded, res.status]).toEqual([onExcluded, 200]);
      const fires = res.body.data.fires as { at: number; calendar?: string; excluded?: boolean }[];
      expect(fires).toHaveLength(1000);
      expect(fires.every((f) => f.calendar === 'closed' && f.excluded === true)).toBe(true);
    }
    // Nearly a whole year excluded: fires more than 31 days before the business day are recorded missed.
    const nearly = await h.as(alphaToken).get(`/api/timer/v1/preview?${everySecond}&count=3&calendars=nearly&onExcluded=nextBusinessDay`);
    expect(nearly.status).toBe(200);
    expect(nearly.body.data.fires[0]).toMatchObject({ at: from, calendar: 'nearly', excluded: true });
    // Every second of two days a year, found past a sparse stretch.
    const dense = await h.as(alphaToken).get(`/api/timer/v1/preview?cron=${encodeURIComponent('* * * 1,2 1 *')}&from=${from}&count=2&app=alpha&calendars=weekend`);
    expect(dense.status).toBe(200);
    expect(dense.body.data.fires.map((f: { utc: string }) => f.utc)).toEqual(['2028-01-01T00:00:00.000Z', '2028-01-01T00:00:01.000Z']);
    // A stored timer with the calendar: its GET marks the same.
    const id = (await timer({ cron: '* * * * * *', calendars: ['closed'], onExcluded: 'nextBusinessDay' })).body.id as string;
    const got = await h.as().get(`/api/timer/v1/def?app=alpha&id=${id}`);
    expect(got.status).toBe(200);
    expect(got.body.data.calendar[0]).toMatchObject({ calendar: 'closed', excluded: true });
  });
});
