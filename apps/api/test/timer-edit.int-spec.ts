import { ApiHarness } from './api-harness';

// Edits with versions, the version history and idempotent creates, against real MariaDB, Redis and
// Pulsar with a fixed clock (never sleeps).
jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/timer';
const Y = new Date().getUTCFullYear() + 1;
const at = (s: string) => Date.parse(`${Y}-${s}`);
const MIN = 60_000;

describe('api timer edits, versions and idempotent create (real MariaDB, Redis, Pulsar)', () => {
  // 2 h 55 min: from 10:05, where the edits below happen, the near future ends where the prepared
  // windows do (13:00); an enable at 10:00 writes the same ten-minute fires.
  const h = new ApiHarness({ TIMER_PRECREATE_SECONDS: String(175 * 60) });
  const def = '/api/timer/v1/def';

  beforeAll(() => h.start());
  afterAll(() => h.stop());
  beforeEach(() => h.clock.set(at('06-01T10:00:00Z')));

  const body = (over: Record<string, unknown> = {}) => ({
    app: 'alpha',
    name: `t-${Math.random().toString(36).slice(2)}`,
    cron: '0 */10 * * * *',
    notifyHTTPParam: { url: HOOK, method: 'POST' },
    ...over,
  });

  async function create(over: Record<string, unknown> = {}): Promise<number> {
    const res = await h.as().post(def, body(over));
    expect(res.body).toMatchObject({ code: 0, version: 1 });
    return res.body.id as number;
  }

  async function createEnabled(over: Record<string, unknown> = {}): Promise<number> {
    const id = await create(over);
    expect((await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' })).body).toMatchObject({ code: 0, data: { changed: true, version: 2 } });
    return id;
  }

  const get = async (id: number) => (await h.as().get(`${def}?id=${id}&app=alpha`)).body.data as Record<string, unknown>;
  type Row = { run_at: number; status: number; error: string | null };
  const rows = async (id: number): Promise<Row[]> =>
    ((await h.db.query('SELECT run_at, status, error FROM tasks WHERE timer_id = ? ORDER BY run_at', [id])) as Row[]).map((r) => ({ ...r, run_at: Number(r.run_at) }));
  const pendingFrom = async (id: number, from: number) => (await rows(id)).filter((r) => r.status === 0 && r.run_at >= from).map((r) => r.run_at);
  const indexed = async (id: number) => (await h.indexEntries()).filter((e) => e.member.startsWith(`${id}-`)).map((e) => e.score);
  const versionRows = (id: number) => h.count('SELECT COUNT(*) AS n FROM timer_versions WHERE timer_id = ?', [id]);
  /** Every `stepMin` minutes in [from, to). */
  const every = (stepMin: number, from: number, to: number) => {
    const out: number[] = [];
    for (let t = Math.ceil(from / (stepMin * MIN)) * stepMin * MIN; t < to; t += stepMin * MIN) out.push(t);
    return out;
  };

  describe('versions', () => {
    it('create answers version 1; enable, unable and each edit increment it; GET shows it', async () => {
      const res = await h.as().post(def, body());
      expect(res.body).toEqual({ code: 0, msg: 'ok', id: expect.any(Number), version: 1 });
      const id = res.body.id as number;
      expect(await get(id)).toMatchObject({ id, version: 1 });
      expect((await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' })).body.data).toMatchObject({ changed: true, version: 2 });
      expect((await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' })).body.data).toMatchObject({ changed: false, version: 2 });
      expect((await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' })).body).toEqual({ code: 0, msg: 'ok', data: { changed: true, version: 3, removedFires: 17 } });
      expect((await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' })).body.data).toEqual({ changed: false, version: 3, removedFires: 0 });
      expect((await h.as().patch(def, { id, app: 'alpha', version: 3, name: 'renamed' })).body.data).toMatchObject({ changed: true, version: 4 });
      expect(await get(id)).toMatchObject({ name: 'renamed', version: 4 });
      const list = await h.as().get('/api/timer/v1/defs?app=alpha&name=renamed');
      expect(list.body.data[0]).toMatchObject({ id, version: 4 });
    });

    it('lists the versions newest first with their time and change, paged like the other lists', async () => {
      const id = await create({ name: 'history', cron: '0 0 * * * *' });
      h.clock.set(at('06-01T10:01:00Z'));
      await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
      h.clock.set(at('06-01T10:02:00Z'));
      await h.as().put(def, { ...body({ name: 'history', cron: '0 30 * * * *' }), id, version: 2 });
      h.clock.set(at('06-01T10:03:00Z'));
      await h.as().patch(def, { id, app: 'alpha', version: 3, notifyHTTPParam: { url: `${HOOK}/v4` } });
      const res = await h.as().get(`${def}/versions?id=${id}&app=alpha`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(4);
      expect(res.body.data.map((v: { version: number; change: string; changedAt: number }) => [v.version, v.change, v.changedAt])).toEqual([
        [4, 'patch', at('06-01T10:03:00Z')],
        [3, 'update', at('06-01T10:02:00Z')],
        [2, 'enable', at('06-01T10:01:00Z')],
        [1, 'create', at('06-01T10:00:00Z')],
      ]);
      expect(res.body.data[0]).toMatchObject({ name: 'history', cron: '0 30 * * * *', status: 2, notifyHTTPParam: { url: `${HOOK}/v4`, method: 'POST' } });
      expect(res.body.data[3]).toMatchObject({ cron: '0 0 * * * *', status: 1, notifyHTTPParam: { url: HOOK } });
      const page = await h.as().get(`${def}/versions?id=${id}&app=alpha&pageIndex=2&pageSize=1`);
      expect(page.body).toMatchObject({ code: 0, total: 4, data: [{ version: 3 }] });
      expect((await h.as().get(`${def}/versions?id=${id}&app=beta`)).status).toBe(404);
      expect((await h.as().get(`${def}/versions?id=${id}&app=alpha&pageSize=0`)).status).toBe(400);
    });
  });

  describe('PUT and PATCH', () => {
    it('fire policies: create, GET, PATCH (null restores a catch-up default), PUT (defaults) and the versions carry them; the fires stay', async () => {
      const policies = { overlapPolicy: 'buffer_one', catchupPolicy: 'latest', catchupWindowMs: 120_000, jitterMs: 1_500 };
      const id = await createEnabled(policies);
      expect(await get(id)).toMatchObject(policies);
      const fires = await pendingFrom(id, 0);

      const patched = await h.as().patch(def, { id, app: 'alpha', version: 2, overlapPolicy: 'skip', catchupPolicy: null, jitterMs: 0 });
      expect(patched.body).toMatchObject({ code: 0, data: { version: 3, changed: true, superseded: 0 } });
      expect(await get(id)).toMatchObject({ overlapPolicy: 'skip', catchupPolicy: null, catchupWindowMs: 120_000, jitterMs: 0 });
      expect(await pendingFrom(id, 0)).toEqual(fires); // policies are not the schedule

      expect((await h.as().put(def, { ...body(), id, version: 3 })).body).toMatchObject({ code: 0, data: { version: 4 } });
      expect(await get(id)).toMatchObject({ overlapPolicy: 'allow', catchupPolicy: null, catchupWindowMs: null, jitterMs: 0 });

      const versions = (await h.as().get(`${def}/versions?id=${id}&app=alpha`)).body.data as Record<string, unknown>[];
      expect(versions.map((v) => [v.version, v.overlapPolicy, v.catchupPolicy, v.catchupWindowMs, v.jitterMs])).toEqual([
        [4, 'allow', null, null, 0],
        [3, 'skip', null, 120_000, 0],
        [2, 'buffer_one', 'latest', 120_000, 1_500],
        [1, 'buffer_one', 'latest', 120_000, 1_500],
      ]);
      const refused = await h.as().patch(def, { id, app: 'alpha', version: 4, jitterMs: 3_600_001 });
      expect(refused.status).toBe(400);
      expect(refused.body.msg).toMatch(/^jitterMs must not be greater than 3600000/);
      expect((await get(id)).version).toBe(4);
    });

    it('PUT replaces the definition (what it leaves out takes the defaults of create) and regenerates the pending fires in one step', async () => {
      const id = await createEnabled({ timeZone: 'Europe/Berlin', retryPolicy: { maxAttempts: 5, backoffMs: 2000 }, misfirePolicy: 'skip', notifyHTTPParam: { url: HOOK, method: 'POST', body: 'x' } });
      // Enabled at 10:00: every 10 minutes through 13:00 (the prepared windows). Now it is 10:05, and
      // the 10:10 fire is already claimed by an executor.
      expect(await pendingFrom(id, 0)).toEqual(every(10, at('06-01T10:00:00Z'), at('06-01T13:00:00Z')));
      h.clock.set(at('06-01T10:05:00Z'));
      await h.db.query('UPDATE tasks SET status = 1, attempt = 1 WHERE timer_id = ? AND run_at = ?', [id, at('06-01T10:10:00Z')]);

      const res = await h.as().put(def, { ...body({ name: 'replaced', cron: '0 */15 * * * *', notifyHTTPParam: { url: `${HOOK}/new`, method: 'put' } }), id, version: 2 });
      expect(res.status).toBe(200);
      // 10:15 .. 12:45 every 15 minutes (11); 5 of them (the half hours) existed; 17 ten-minute fires
      // from 10:05 on, 5 shared, 1 claimed: 11 superseded.
      expect(res.body).toEqual({ code: 0, msg: 'ok', data: { id, version: 3, changed: true, superseded: 11, fires: 6 } });

      const now = at('06-01T10:05:00Z');
      const newFires = every(15, now, at('06-01T13:00:00Z'));
      expect(await pendingFrom(id, now)).toEqual(newFires);
      const all = await rows(id);
      const byTime = new Map(all.map((r) => [r.run_at, r]));
      expect(byTime.get(at('06-01T10:00:00Z'))).toMatchObject({ status: 0, error: null }); // before now: on its way, left alone
      expect(byTime.get(at('06-01T10:10:00Z'))).toMatchObject({ status: 1 }); // claimed: finishes as claimed
      const superseded = all.filter((r) => r.status === 4);
      expect(superseded).toHaveLength(11);
      expect(superseded.every((r) => r.error === 'superseded by version 3' && !newFires.includes(r.run_at))).toBe(true);
      // The slice index: the new fires in, the superseded ones out (the claimed one stays as it was).
      expect((await indexed(id)).filter((t) => t >= now).sort((a, b) => a - b)).toEqual([at('06-01T10:10:00Z'), ...newFires].sort((a, b) => a - b));

      expect(await get(id)).toMatchObject({
        name: 'replaced',
        cron: '0 */15 * * * *',
        timeZone: 'UTC',
        notifyHTTPParam: { url: `${HOOK}/new`, method: 'PUT' },
        retryPolicy: { maxAttempts: 3, backoffMs: 1000 },
        misfirePolicy: 'fire_late',
        status: 2,
        version: 3,
      });
      expect((await get(id)).notifyHTTPParam).not.toHaveProperty('body');
    });

    it('PATCH changes only the fields given; an edit back makes the superseded fires pending again', async () => {
      const id = await createEnabled({ notifyHTTPParam: { url: HOOK, method: 'POST', header: { 'X-A': ['1'] }, body: 'b' }, retryPolicy: { maxAttempts: 4 } });
      h.clock.set(at('06-01T10:05:00Z'));
      const now = at('06-01T10:05:00Z');
      const tenMinutes = every(10, now, at('06-01T13:00:00Z'));

      const quarter = await h.as().patch(def, { id, app: 'alpha', version: 2, cron: '0 */15 * * * *' });
      expect(quarter.body.data).toMatchObject({ version: 3, changed: true, superseded: 12, fires: 6 });
      expect(await pendingFrom(id, now)).toEqual(every(15, now, at('06-01T13:00:00Z')));

      // A callback-only change: the fires stay as they are.
      const url = await h.as().patch(def, { id, app: 'alpha', version: 3, notifyHTTPParam: { url: `${HOOK}/2`, body: null }, retryPolicy: { backoffMs: 500 } });
      expect(url.body.data).toMatchObject({ version: 4, changed: true, superseded: 0, fires: 0 });
      expect(await get(id)).toMatchObject({
        cron: '0 */15 * * * *',
        notifyHTTPParam: { url: `${HOOK}/2`, method: 'POST', header: { 'X-A': ['1'] } },
        retryPolicy: { maxAttempts: 4, backoffMs: 500 },
        version: 4,
      });
      expect((await get(id)).notifyHTTPParam).not.toHaveProperty('body');

      const back = await h.as().patch(def, { id, app: 'alpha', version: 4, cron: '0 */10 * * * *' });
      expect(back.body.data).toMatchObject({ version: 5, superseded: 6, fires: 12 });
      expect(await pendingFrom(id, now)).toEqual(tenMinutes);
      expect((await rows(id)).filter((r) => r.status === 4).every((r) => r.error === 'superseded by version 5' && !tenMinutes.includes(r.run_at))).toBe(true);
      expect((await indexed(id)).filter((t) => t >= now).sort((a, b) => a - b)).toEqual(tenMinutes);

      // The same definition again: nothing written, the version stays.
      const versions = await versionRows(id);
      const same = await h.as().patch(def, { id, app: 'alpha', version: 5, cron: '0 */10 * * * *' });
      expect(same.body.data).toEqual({ id, version: 5, changed: false, superseded: 0, fires: 0 });
      expect(await versionRows(id)).toBe(versions);
    });

    it('an edit of a disabled timer (whose fires ahead the disable deleted) creates none; enable creates the new ones', async () => {
      const id = await createEnabled();
      h.clock.set(at('06-01T10:05:00Z'));
      expect((await h.as().post('/api/timer/v1/unable', { id, app: 'alpha' })).body.data).toMatchObject({ removedFires: 17 });
      const res = await h.as().patch(def, { id, app: 'alpha', version: 3, cron: '0 */20 * * * *' });
      expect(res.body.data).toMatchObject({ version: 4, superseded: 0, fires: 0 });
      const now = at('06-01T10:05:00Z');
      expect(await pendingFrom(id, now)).toEqual([]);
      await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
      expect(await pendingFrom(id, now)).toEqual(every(20, now, at('06-01T13:00:00Z')));
    });

    it('an edit, a disable and a delete fence the first claims of the fires they settle or remove within the next minute', async () => {
      const claimOf = (id: number, t: number) => h.redis.get(`${h.prefix}claim:${id}-${t}`);
      const now = at('06-01T10:00:00Z');
      const soon = [10, 20, 30, 40, 50].map((x) => now + x * 1000);
      // An edit: the 10-s fires the 20-s schedule lacks are superseded and fenced; the shared ones are not.
      const edited = await createEnabled({ cron: '*/10 * * * * *' });
      await h.as().patch(def, { id: edited, app: 'alpha', version: 2, cron: '*/20 * * * * *' });
      expect(await Promise.all(soon.map((t) => claimOf(edited, t)))).toEqual(['settled@0', null, 'settled@0', null, 'settled@0']);
      // A disable: every pending fire of the next minute; a delete, as well.
      const disabled = await createEnabled({ cron: '*/10 * * * * *' });
      await h.as().post('/api/timer/v1/unable', { id: disabled, app: 'alpha' });
      expect(await Promise.all(soon.map((t) => claimOf(disabled, t)))).toEqual(soon.map(() => 'settled@0'));
      expect(await claimOf(disabled, now + 70_000)).toBeNull();
      const deleted = await createEnabled({ cron: '*/10 * * * * *' });
      await h.as().delete(def, { id: deleted, app: 'alpha' });
      expect(await Promise.all(soon.map((t) => claimOf(deleted, t)))).toEqual(soon.map(() => 'settled@0'));
      expect(await h.redis.pttl(`${h.prefix}claim:${disabled}-${soon[4]}`)).toBeGreaterThan(90_000);
    });

    it('enable and each schedule edit set the next fire after the fires they created (the migrator reads the timer from there)', async () => {
      const nextFire = async (id: number) => {
        const [r] = (await h.db.query('SELECT next_fire_at AS n FROM timers WHERE id = ?', [id])) as { n: string | number | null }[];
        return r.n === null ? null : Number(r.n);
      };
      const id = await create();
      expect(await nextFire(id)).toBe(0); // disabled: not known, not read
      await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
      expect(await nextFire(id)).toBe(at('06-01T13:00:00Z')); // fires created through 12:59:59
      await h.as().patch(def, { id, app: 'alpha', version: 2, cron: '0 30 8 * * *' }); // daily 08:30 UTC
      expect(await nextFire(id)).toBe(at('06-02T08:30:00Z'));
      await h.as().patch(def, { id, app: 'alpha', version: 3, cron: null, runAt: at('06-01T11:00:00Z') }); // a one-shot it created
      expect(await nextFire(id)).toBeNull();
    });

    it('moves a one-shot: the old time is superseded, the new one created', async () => {
      const id = await createEnabled({ cron: undefined, runAt: at('06-01T11:00:00Z') });
      const res = await h.as().patch(def, { id, app: 'alpha', version: 2, runAt: `${Y}-06-01T12:00:00Z` });
      expect(res.body.data).toMatchObject({ version: 3, superseded: 1, fires: 1 });
      expect(await rows(id)).toEqual([
        { run_at: at('06-01T11:00:00Z'), status: 4, error: 'superseded by version 3' },
        { run_at: at('06-01T12:00:00Z'), status: 0, error: null },
      ]);
      // A one-shot whose time has passed may still get a new callback without giving runAt again.
      h.clock.set(at('06-01T12:30:00Z'));
      expect((await h.as().patch(def, { id, app: 'alpha', version: 3, notifyHTTPParam: { method: 'GET' } })).body.data).toMatchObject({ version: 4 });
      expect((await h.as().patch(def, { id, app: 'alpha', version: 4, runAt: at('06-01T12:00:00Z') })).status).toBe(400);
    });

    it('a stale version answers 409 with the current version and writes nothing', async () => {
      const id = await createEnabled();
      const before = { rows: await rows(id), versions: await versionRows(id) };
      for (const [method, payload] of [
        ['put', { ...body({ cron: '0 */15 * * * *' }), id, version: 1 }],
        ['patch', { id, app: 'alpha', version: 1, cron: '0 */15 * * * *' }],
        ['patch', { id, app: 'alpha', version: 3, cron: '0 */15 * * * *' }],
      ] as const) {
        const res = await h.as()[method](def, payload);
        expect({ method, status: res.status }).toEqual({ method, status: 409 });
        expect(res.body).toMatchObject({ code: 40901, data: { version: 2 }, requestId: expect.any(String) });
        expect(res.body.msg).toMatch(/version .* current version of the timer \(2\)/);
      }
      expect(await get(id)).toMatchObject({ cron: '0 */10 * * * *', version: 2 });
      expect(await rows(id)).toEqual(before.rows);
      expect(await versionRows(id)).toBe(before.versions);
    });

    it('bad input answers 400 naming the field and writes nothing', async () => {
      const id = await createEnabled({ name: 'keep' });
      const before = { rows: await rows(id), versions: await versionRows(id), timer: await get(id) };
      const cases: [string, 'put' | 'patch', Record<string, unknown>, RegExp][] = [
        ['both cron and runAt', 'put', { ...body({ name: 'keep', runAt: at('06-02T10:00:00Z') }), id, version: 2 }, /^give exactly one of cron, runAt and every \(got cron and runAt\)$/],
        ['both on PATCH', 'patch', { id, app: 'alpha', version: 2, cron: '* * * * *', runAt: at('06-02T10:00:00Z') }, /^give exactly one of cron, runAt and every \(got cron and runAt\)$/],
        ['a version that is not a number', 'put', { ...body({ name: 'keep' }), id, version: 'two' }, /^version must be an integer/],
        ['a version as a string', 'patch', { id, app: 'alpha', version: '2', name: 'x' }, /^version must be an integer/],
        ['no version on PUT', 'put', { ...body({ name: 'keep' }), id }, /^version must be an integer/],
        ['no version on PATCH', 'patch', { id, app: 'alpha', name: 'x' }, /^version must be an integer/],
        ['a runAt in the past', 'patch', { id, app: 'alpha', version: 2, runAt: at('06-01T09:00:00Z') }, /^runAt .* is not in the future/],
        ['an invalid cron', 'patch', { id, app: 'alpha', version: 2, cron: '61 * * * *' }, /^cron: /],
        ['an unknown zone', 'patch', { id, app: 'alpha', version: 2, timeZone: 'Mars/Base' }, /^timeZone: /],
        ['a private callback', 'patch', { id, app: 'alpha', version: 2, notifyHTTPParam: { url: 'http://127.0.0.1/x' } }, /^notifyHTTPParam\.url /],
        ['a status (not editable)', 'patch', { id, app: 'alpha', version: 2, status: 1 }, /property status should not exist/],
        ['PUT without notifyHTTPParam', 'put', { id, app: 'alpha', version: 2, name: 'keep', cron: '* * * * *' }, /notifyHTTPParam/],
      ];
      for (const [why, method, payload, msg] of cases) {
        const res = await h.as()[method](def, payload);
        expect({ why, status: res.status, code: res.body.code }).toEqual({ why, status: 400, code: 40001 });
        expect({ why, msg: res.body.msg }).toEqual({ why, msg: expect.stringMatching(msg) });
      }
      expect(await rows(id)).toEqual(before.rows);
      expect(await versionRows(id)).toBe(before.versions);
      expect(await get(id)).toEqual(before.timer);
    });

    it('a new name that another live timer has is 409; unknown, deleted and other apps\' timers are 404', async () => {
      await create({ name: 'taken' });
      const id = await create({ name: 'mine' });
      const res = await h.as().patch(def, { id, app: 'alpha', version: 1, name: 'taken' });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 40900, msg: expect.stringContaining('taken') });
      expect(await get(id)).toMatchObject({ name: 'mine', version: 1 });
      expect(await versionRows(id)).toBe(1);
      expect((await h.as().patch(def, { id, app: 'beta', version: 1, name: 'x' })).status).toBe(404);
      expect((await h.as().patch(def, { id: 999_999_999, app: 'alpha', version: 1, name: 'x' })).status).toBe(404);
      await h.as().delete(def, { id, app: 'alpha' });
      expect((await h.as().put(def, { ...body(), id, version: 2 })).status).toBe(404);
    });
  });

  describe('Idempotency-Key on create', () => {
    const timers = () => h.count("SELECT COUNT(*) AS n FROM timers WHERE app IN ('alpha', 'beta')");

    it('the same key and body answers the first result again; another body 422; keys are per app', async () => {
      const first = body({ name: 'idem', runAt: at('06-01T11:00:00Z'), cron: undefined, notifyHTTPParam: { url: HOOK, method: 'post', header: { A: '1', B: ['2'] } } });
      const a = await h.as().post(def, first).set('Idempotency-Key', 'order-1');
      expect(a.status).toBe(200);
      expect(a.headers['idempotent-replayed']).toBeUndefined();
      const count = await timers();
      // The same request written differently (ISO time, key order, header as an array, method case).
      const again = { notifyHTTPParam: { header: { B: ['2'], A: ['1'] }, method: 'POST', url: HOOK }, runAt: `${Y}-06-01T11:00:00Z`, name: 'idem', app: 'alpha' };
      const b = await h.as().post(def, again).set('Idempotency-Key', 'order-1');
      expect(b.status).toBe(200);
      expect(b.body).toEqual({ code: 0, msg: 'ok', id: a.body.id, version: 1 });
      expect(b.headers['idempotent-replayed']).toBe('true');
      // Also once its runAt has passed, and after the timer was edited: the first answer.
      await h.as().patch(def, { id: a.body.id, app: 'alpha', version: 1, name: 'idem-edited' });
      h.clock.set(at('06-01T12:00:00Z'));
      expect((await h.as().post(def, first).set('Idempotency-Key', 'order-1')).body).toEqual({ code: 0, msg: 'ok', id: a.body.id, version: 1 });
      expect(await timers()).toBe(count);

      const other = await h.as().post(def, { ...first, name: 'idem-2', runAt: at('06-01T13:00:00Z') }).set('Idempotency-Key', 'order-1');
      expect(other.status).toBe(422);
      expect(other.body).toMatchObject({ code: 42200, msg: expect.stringContaining('Idempotency-Key') });
      expect(await timers()).toBe(count);

      const beta = await h.as().post(def, { ...first, app: 'beta', runAt: at('06-01T13:00:00Z') }).set('Idempotency-Key', 'order-1');
      expect(beta.status).toBe(200);
      expect(beta.body.id).not.toBe(a.body.id);
      expect(await timers()).toBe(count + 1);
    });

    it('concurrent requests with one key create one timer and all answer its id', async () => {
      const payload = body({ name: 'race' });
      const before = await timers();
      const answers = await Promise.all(Array.from({ length: 6 }, () => h.as().post(def, payload).set('Idempotency-Key', 'race-key')));
      expect(answers.map((r) => r.status)).toEqual(Array(6).fill(200));
      expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
      expect(answers.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(5);
      expect(await timers()).toBe(before + 1);
    });

    it('a key over 255 characters is 400 naming the header; a refused create does not use the key up', async () => {
      const before = await timers();
      const long = await h.as().post(def, body()).set('Idempotency-Key', 'k'.repeat(256));
      expect(long.status).toBe(400);
      expect(long.body).toMatchObject({ code: 40001, msg: expect.stringMatching(/^Idempotency-Key header must be at most 255 characters/) });
      expect(await timers()).toBe(before);
      expect((await h.as().post(def, body()).set('Idempotency-Key', 'k'.repeat(255))).status).toBe(200);

      await create({ name: 'dup-name' });
      const dup = await h.as().post(def, body({ name: 'dup-name' })).set('Idempotency-Key', 'dup-key');
      expect(dup.status).toBe(409);
      expect((await h.as().post(def, body({ name: 'not-dup' })).set('Idempotency-Key', 'dup-key')).status).toBe(200);
      expect(await h.count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE `key` = 'dup-key'")).toBe(1);
    });

    it('a key older than 24 h is free again', async () => {
      const a = await h.as().post(def, body({ name: 'day-1' })).set('Idempotency-Key', 'daily');
      h.clock.set(at('06-01T10:00:00Z') + 24 * 3_600_000 - 1);
      expect((await h.as().post(def, body({ name: 'day-2' })).set('Idempotency-Key', 'daily')).status).toBe(422);
      h.clock.set(at('06-02T10:00:00Z') + 1);
      const b = await h.as().post(def, body({ name: 'day-2' })).set('Idempotency-Key', 'daily');
      expect(b.status).toBe(200);
      expect(b.body.id).not.toBe(a.body.id);
      expect(b.headers['idempotent-replayed']).toBeUndefined();
    });
  });
});

describe('the near-future cut: enable, batch and edit write TIMER_PRECREATE_SECONDS ahead, the migrator the rest (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness({ TIMER_PRECREATE_SECONDS: '180' });
  const NOW = at('06-01T10:00:00Z');
  const CUT = NOW + 180_000;
  beforeAll(() => h.start());
  afterAll(() => h.stop());
  beforeEach(() => h.clock.set(NOW));

  const runAts = async (id: number) => ((await h.db.query('SELECT run_at FROM tasks WHERE timer_id = ? ORDER BY run_at', [id])) as { run_at: string }[]).map((r) => Number(r.run_at));
  const nextFire = async (id: number) => Number(((await h.db.query('SELECT next_fire_at AS n FROM timers WHERE id = ?', [id])) as { n: string }[])[0].n);
  const indexed = async (id: number) => (await h.indexEntries()).filter((e) => e.member.startsWith(`${id}-`)).map((e) => e.score).sort((a, b) => a - b);
  const seconds = (from: number, to: number, step = 1_000) => Array.from({ length: Math.ceil((to - from) / step) }, (_, i) => from + i * step);

  it('an every-second enable writes 3 minutes of fires, indexed, and leaves next_fire_at at the cut', async () => {
    const res = await h.as().post('/api/timer/v1/def', { app: 'alpha', name: 'every-second', cron: '* * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' } });
    const id = res.body.id as number;
    expect((await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' })).body.data).toMatchObject({ changed: true, fires: 180, until: CUT });
    expect(await runAts(id)).toEqual(seconds(NOW, CUT));
    // Committed, then indexed (those due within NEAR_NOW_MS are published instead).
    expect(await indexed(id)).toEqual(seconds(NOW + 3_000, CUT));
    expect(await nextFire(id)).toBe(CUT);
  });

  it('a batch create+enable writes the same cut for each timer', async () => {
    const timers = [0, 1, 2].map((i) => ({ name: `batch-${i}`, cron: '* * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' } }));
    const res = await h.as().post('/api/timer/v1/def/batch', { app: 'alpha', enable: true, timers });
    const ids = (res.body.data.timers as { id: number; fires: number }[]).map((t) => t.id);
    expect((res.body.data.timers as { fires: number }[]).map((t) => t.fires)).toEqual([180, 180, 180]);
    for (const id of ids) {
      expect(await runAts(id)).toEqual(seconds(NOW, CUT));
      expect(await nextFire(id)).toBe(CUT);
    }
  });

  it('an edit regenerates the near future and deletes the open fires after it (the migrator writes them again), keeping claimed ones', async () => {
    const res = await h.as().post('/api/timer/v1/def', { app: 'alpha', name: 'edited', cron: '* * * * * *', notifyHTTPParam: { url: HOOK, method: 'POST' } });
    const id = res.body.id as number;
    await h.as().post('/api/timer/v1/enable', { id, app: 'alpha' });
    // What the migrator's top-up wrote after the enable: the rest of 10:00-10:10.
    const rest = seconds(CUT, NOW + 600_000);
    await h.db.query(`INSERT INTO tasks (app, timer_id, run_at) VALUES ${rest.map(() => "('alpha', ?, ?)").join(', ')}`, rest.flatMap((t) => [id, t]));
    await h.db.query('UPDATE tasks SET status = 1, attempt = 1 WHERE timer_id = ? AND run_at = ?', [id, NOW + 300_000]); // claimed
    await h.db.query("UPDATE tasks SET status = 4, error = 'superseded by version 9' WHERE timer_id = ? AND run_at = ?", [id, NOW + 400_000]);
    h.clock.set(NOW + 10_000);
    const edit = await h.as().patch('/api/timer/v1/def', { id, app: 'alpha', version: 2, cron: '*/2 * * * * *' });
    expect(edit.body.data).toMatchObject({ version: 3, changed: true });
    const cut = NOW + 10_000 + 180_000;
    const stored = await runAts(id);
    // From now to the cut: every other second; after it only the claimed fire; before now, as it was.
    expect(stored.filter((t) => t >= NOW + 10_000 && t < cut)).toEqual(expect.arrayContaining(seconds(NOW + 10_000, cut, 2_000)));
    expect(stored.filter((t) => t >= cut)).toEqual([NOW + 300_000]);
    expect(await nextFire(id)).toBe(cut);
    expect((await indexed(id)).filter((t) => t >= cut)).toEqual([]);
  });
});
