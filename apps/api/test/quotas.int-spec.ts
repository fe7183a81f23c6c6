import { ApiHarness } from './api-harness';

// Per-app quotas and admission by projected load, against real MariaDB, Redis and Pulsar with a fixed
// clock (never sleeps): the refusals are 403/429 with the numbers in the message and nothing written.
jest.setTimeout(90_000);

const HOOK = 'https://hooks.example.com/timer';
const Y = new Date().getUTCFullYear() + 1;
const at = (s: string) => Date.parse(`${Y}-${s}`);
const T = at('06-01T10:00:00Z');
const def = '/api/timer/v1/def';

function helpers(h: ApiHarness) {
  const body = (app: string, over: Record<string, unknown> = {}) => ({
    app,
    name: `t-${Math.random().toString(36).slice(2)}`,
    ...('every' in over ? {} : { cron: '0 */10 * * * *' }),
    notifyHTTPParam: { url: HOOK, method: 'POST' },
    ...over,
  });
  const create = async (app: string, over: Record<string, unknown> = {}): Promise<number> => {
    const res = await h.as().post(def, body(app, over));
    expect(res.body).toMatchObject({ code: 0 });
    return res.body.id as number;
  };
  const enable = (app: string, id: number) => h.as().post('/api/timer/v1/enable', { app, id });
  const createEnabled = async (app: string, over: Record<string, unknown> = {}): Promise<number> => {
    const id = await create(app, over);
    expect((await enable(app, id)).body).toMatchObject({ code: 0, data: { changed: true } });
    return id;
  };
  /** What a refusal must leave unchanged: timers, versions, fires, idempotency keys. */
  const snapshot = async () => ({
    timers: await h.count('SELECT COUNT(*) AS n FROM timers'),
    versions: await h.count('SELECT COUNT(*) AS n FROM timer_versions'),
    tasks: await h.count('SELECT COUNT(*) AS n FROM tasks'),
    pending: await h.count('SELECT COUNT(*) AS n FROM tasks WHERE status = 0'),
    keys: await h.count('SELECT COUNT(*) AS n FROM idempotency_keys'),
    index: (await h.indexEntries()).length,
  });
  const putQuota = (q: Record<string, unknown>) => h.as().put('/api/app/v1/quota', q);
  return { body, create, enable, createEnabled, snapshot, putQuota };
}

describe('api quotas per app (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness({ TIMER_QUOTA_MAX_TIMERS: '50', TIMER_CAPACITY_FIRES_PER_SEC: '0' });
  const { body, create, enable, createEnabled, snapshot, putQuota } = helpers(h);
  let alphaToken = '';

  beforeAll(async () => {
    await h.start();
    for (const app of ['alpha', 'beta', 'race', 'burst', 'rate', 'gap', 'few']) expect((await h.as().post('/api/app/v1/apps', { app })).body.code).toBe(0);
    alphaToken = (await h.as().post('/api/app/v1/tokens', { app: 'alpha' })).body.data.token as string;
  });
  afterAll(() => h.stop());
  beforeEach(() => h.clock.set(T));

  it('PUT (admin only) sets each quota, null or left out is the default; GET shows quota, what was set and the usage', async () => {
    const before = await h.as().get('/api/app/v1/quota?app=alpha');
    expect(before.body.data).toEqual({
      app: 'alpha',
      quota: { maxTimers: 50, maxFiresPerMinute: 120_000, minIntervalMs: 1_000 },
      set: { maxTimers: null, maxFiresPerMinute: null, minIntervalMs: null },
      usage: { timers: 0, firesPerMinute: 0, busiestMinute: null, until: expect.any(Number) },
    });
    const put = await putQuota({ app: 'alpha', maxTimers: 7, maxFiresPerMinute: null, minIntervalMs: 0 });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ quota: { maxTimers: 7, maxFiresPerMinute: 120_000, minIntervalMs: 0 }, set: { maxTimers: 7, maxFiresPerMinute: null, minIntervalMs: 0 } });
    // The app's own token reads it; it may not set it.
    expect((await h.as(alphaToken).get('/api/app/v1/quota?app=alpha')).body.data.quota.maxTimers).toBe(7);
    const byApp = await h.as(alphaToken).put('/api/app/v1/quota', { app: 'alpha', maxTimers: 1000 });
    expect(byApp.status).toBe(403);
    expect(byApp.body.msg).toContain('admin');
    expect((await h.as(alphaToken).get('/api/app/v1/quota?app=beta')).status).toBe(403);
    // PUT replaces: what is left out goes back to the default.
    expect((await putQuota({ app: 'alpha' })).body.data.set).toEqual({ maxTimers: null, maxFiresPerMinute: null, minIntervalMs: null });
    // The usage counts live timers and the busiest coming minute of pending fires.
    await createEnabled('alpha', { cron: '*/10 * * * * *' });
    expect((await h.as().get('/api/app/v1/quota?app=alpha')).body.data.usage).toMatchObject({ timers: 1, firesPerMinute: 6, busiestMinute: T });
  });

  it('refuses bad quota input naming the field, an unknown app, and writes nothing', async () => {
    for (const [field, value] of [['maxTimers', -1], ['maxFiresPerMinute', 1.5], ['minIntervalMs', 'x'], ['maxTimers', 100_000_001], ['minIntervalMs', 86_400_001]] as const) {
      const res = await putQuota({ app: 'beta', [field]: value });
      expect(res.status).toBe(400);
      expect(res.body.msg).toContain(field);
    }
    expect((await putQuota({ app: 'beta', other: 1 })).status).toBe(400);
    expect((await putQuota({ app: 'nobody', maxTimers: 1 })).body.code).toBe(40400);
    expect((await h.as().get('/api/app/v1/quota?app=nobody')).body.code).toBe(40400);
    expect((await h.as().get('/api/app/v1/quota')).status).toBe(400);
    expect((await h.as().get('/api/app/v1/quota?app=beta')).body.data.set).toEqual({ maxTimers: null, maxFiresPerMinute: null, minIntervalMs: null });
  });

  it('maxTimers: the create past it answers 403 naming the quota, its value and the usage; nothing written; a delete frees a place', async () => {
    await putQuota({ app: 'beta', maxTimers: 2 });
    const ids = [await create('beta'), await create('beta')];
    const before = await snapshot();
    const refused = await h.as().post(def, body('beta')).set('Idempotency-Key', 'quota-key-1');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 40301, msg: 'quota maxTimers of app beta is 2; the app has 2 timers: delete one or ask for a larger quota' });
    expect(await snapshot()).toEqual(before);
    // Other apps are not concerned; a deleted timer no longer counts.
    await create('alpha');
    expect((await h.as().delete(def, { app: 'beta', id: ids[0] })).body.code).toBe(0);
    await create('beta');
    // The count the check reads (apps.live_timers) follows creates, refusals and deletes.
    expect(await h.count("SELECT live_timers AS n FROM apps WHERE app = 'beta'")).toBe(2);
  });

  it('maxTimers holds under concurrent creates: 12 at once against maxTimers=5 leave exactly 5', async () => {
    await putQuota({ app: 'race', maxTimers: 5 });
    const results = await Promise.all(Array.from({ length: 12 }, () => h.as().post(def, body('race'))));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 403 && r.body.code === 40301)).toHaveLength(7);
    expect(await h.count("SELECT COUNT(*) AS n FROM timers WHERE app = 'race'")).toBe(5);
    expect(await h.count("SELECT live_timers AS n FROM apps WHERE app = 'race'")).toBe(5);
  });

  it('maxFiresPerMinute holds under concurrent enables (the app\'s lock taken last): 8 one-shots in one minute enabled at once against 3 leave exactly 3', async () => {
    // Created before the quota: a create writes no fire, so only the enables compete for the minute.
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => create('burst', { cron: undefined, runAt: T + 90_000 + i * 1_000 })));
    await putQuota({ app: 'burst', maxFiresPerMinute: 3 });
    const results = await Promise.all(ids.map((id) => enable('burst', id)));
    expect(results.filter((r) => r.status === 200 && r.body.data?.changed === true)).toHaveLength(3);
    expect(results.filter((r) => r.status === 429 && r.body.code === 42902)).toHaveLength(5);
    expect(await h.count("SELECT COUNT(*) AS n FROM timers WHERE app = 'burst' AND status = 2")).toBe(3);
    expect(await h.count("SELECT COUNT(*) AS n FROM tasks WHERE app = 'burst' AND status = 0")).toBe(3);
  });

  it('minIntervalMs: a schedule firing closer answers 403 on create, PATCH and enable, with the gap in the message; nothing written', async () => {
    const fine = await createEnabled('gap', { every: '10s' });
    const later = await create('gap', { cron: '*/2 * * * * *' });
    await putQuota({ app: 'gap', minIntervalMs: 5_000 });
    const before = await snapshot();
    const every = await h.as().post(def, body('gap', { every: '3s' }));
    expect(every.status).toBe(403);
    expect(every.body).toMatchObject({ code: 40301, msg: `quota minIntervalMs of app gap is 5000 ms; this schedule fires 3000 ms apart (at ${new Date(T).toISOString()})` });
    const cron = await h.as().post(def, body('gap', { cron: '0,1 0 * * * *' }));
    expect(cron.body.msg).toContain('quota minIntervalMs of app gap is 5000 ms; this schedule fires 1000 ms apart');
    const patch = await h.as().patch(def, { app: 'gap', id: fine, version: 2, every: '4s' });
    expect(patch.status).toBe(403);
    expect(patch.body.msg).toContain('fires 4000 ms apart');
    const enabling = await enable('gap', later);
    expect(enabling.status).toBe(403);
    expect(enabling.body.msg).toContain('fires 2000 ms apart');
    expect(await snapshot()).toEqual(before);
    // A change that keeps the schedule is not checked again; a slower one passes.
    expect((await h.as().patch(def, { app: 'gap', id: fine, version: 2, every: '6s' })).body).toMatchObject({ code: 0 });
  });

  it('maxFiresPerMinute: the busiest coming minute with the new or edited timer over it answers 429; nothing written', async () => {
    await putQuota({ app: 'rate', maxFiresPerMinute: 100 });
    const first = await createEnabled('rate', { every: '1s' });
    const before = await snapshot();
    const refused = await h.as().post(def, body('rate', { every: '1s' }));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 42902,
      msg: `quota maxFiresPerMinute of app rate is 100; its busiest coming minute (${new Date(T).toISOString()}) would have 120 fires (60 scheduled + 60 of this timer)`,
    });
    expect(await snapshot()).toEqual(before);
    // 60 + 30 fit: created (disabled) and enabled.
    const second = await createEnabled('rate', { every: '2s' });
    // An edit does not count the timer's own stored fires twice: every 2 s -> every 3 s fits (60 + 20)...
    expect((await h.as().patch(def, { app: 'rate', id: second, version: 2, every: '3s' })).body).toMatchObject({ code: 0 });
    // ...every 1 s does not (60 + 60), and leaves its fires as they were.
    const mid = await snapshot();
    const edit = await h.as().patch(def, { app: 'rate', id: second, version: 3, every: '1s' });
    expect(edit.status).toBe(429);
    expect(edit.body.msg).toContain('would have 120 fires (60 scheduled + 60 of this timer)');
    expect(await snapshot()).toEqual(mid);
    // Enable is checked again (the quota may have changed since the create); a disable frees the place.
    const third = await create('rate', { every: '4s' });
    await putQuota({ app: 'rate', maxFiresPerMinute: 90 });
    const enabling = await enable('rate', third);
    expect(enabling.status).toBe(429);
    expect(enabling.body.msg).toContain('quota maxFiresPerMinute of app rate is 90; its busiest coming minute');
    expect(enabling.body.msg).toContain('would have 95 fires (80 scheduled + 15 of this timer)');
    expect((await h.as().post('/api/timer/v1/unable', { app: 'rate', id: first })).body.code).toBe(0);
    expect((await enable('rate', third)).body).toMatchObject({ code: 0, data: { changed: true } });
  });

  it('maxFiresPerMinute with a few fires (one-shot, hourly, daily): the minutes they land in are counted exactly; nothing written on a 429', async () => {
    await putQuota({ app: 'few', maxFiresPerMinute: 3 });
    await createEnabled('few', { every: '30s' }); // 2 fires in every coming minute
    const oneShot = (runAt: number) => ({ cron: undefined, runAt });
    await createEnabled('few', oneShot(T + 90_000)); // 3 in the minute T + 1 min
    const before = await snapshot();
    const refused = await h.as().post(def, body('few', oneShot(T + 100_000)));
    expect(refused.status).toBe(429);
    expect(refused.body.msg).toBe(`quota maxFiresPerMinute of app few is 3; its busiest coming minute (${new Date(T + 60_000).toISOString()}) would have 4 fires (3 scheduled + 1 of this timer)`);
    expect(await snapshot()).toEqual(before);
    // Hourly at minute 5 (3 fires in the prepared windows): 2 + 1 fits once, not twice.
    await createEnabled('few', { cron: '0 5 * * * *' });
    const hourly = await h.as().post(def, body('few', { cron: '0 5 * * * *' }));
    expect(hourly.status).toBe(429);
    expect(hourly.body.msg).toContain(`(${new Date(T + 5 * 60_000).toISOString()}) would have 4 fires (3 scheduled + 1 of this timer)`);
    // A daily cron with no fire in the prepared windows adds nothing.
    await createEnabled('few', { cron: '0 0 3 * * *' });
    expect(await snapshot()).not.toEqual(before);
  });
});

describe('api admission by projected load (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness({ TIMER_CAPACITY_FIRES_PER_SEC: '3' });
  const { body, create, enable, createEnabled, snapshot } = helpers(h);
  let oneToken = '';

  beforeAll(async () => {
    await h.start();
    for (const app of ['one', 'two']) expect((await h.as().post('/api/app/v1/apps', { app })).body.code).toBe(0);
    oneToken = (await h.as().post('/api/app/v1/tokens', { app: 'one' })).body.data.token as string;
  });
  afterAll(() => h.stop());

  it('a create, enable or edit that puts a coming second over the capacity answers 429 naming the second and its load; nothing written', async () => {
    h.clock.set(T);
    const a = await createEnabled('one', { every: '1s' });
    await createEnabled('two', { every: '1s' });
    await createEnabled('two', { cron: '*/10 * * * * *' });
    const before = await snapshot();
    // Every 10th second has 3 fires: an every-second timer would put 4 there.
    const refused = await h.as().post(def, body('one', { every: '1s' }));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 42903,
      msg: `admission: the second ${new Date(T).toISOString()} would have 4 fires (3 scheduled + 1 of this timer), over the capacity of 3 fires/s (TIMER_CAPACITY_FIRES_PER_SEC)`,
    });
    // A timer firing only in the quieter seconds fits.
    await createEnabled('one', { cron: '5 * * * * *' });
    expect(await h.count('SELECT COUNT(*) AS n FROM timers')).toBe(before.timers + 1);
    // An edit does not count the timer's own fires twice: moving `a` off the full seconds is fine.
    expect((await h.as().patch(def, { app: 'one', id: a, version: 2, cron: '1-4 * * * * *' })).body).toMatchObject({ code: 0 });

    h.clock.set(T + 10_000); // past the reuse of the all-apps load
    const disabled = await create('two', { cron: '0 * * * * *' });
    await createEnabled('two', { cron: '*/10 * * * * *' });
    const mid = await snapshot();
    const enabling = await enable('two', disabled);
    expect(enabling.status).toBe(429);
    expect(enabling.body.msg).toBe(
      `admission: the second ${new Date(T + 60_000).toISOString()} would have 4 fires (3 scheduled + 1 of this timer), over the capacity of 3 fires/s (TIMER_CAPACITY_FIRES_PER_SEC)`,
    );
    expect(await snapshot()).toEqual(mid);
  });

  it('GET /load: fires per second, the app\'s own for an app token and all apps\' for the admin; the range is bounded', async () => {
    h.clock.set(T + 20_000);
    const from = T + 60_000;
    const all = await h.as().get(`/api/app/v1/load?from=${from}&to=${from + 10_000}`);
    expect(all.status).toBe(200);
    // Seconds 0-9 of a minute: two's every-second timer in each, its two */10 at 0, one's `1-4` and `5`.
    expect(all.body.data).toEqual({ app: null, from, to: from + 10_000, capacityPerSec: 3, peak: { at: from, fires: 3 }, perSecond: [3, 2, 2, 2, 2, 2, 1, 1, 1, 1] });
    const own = await h.as(oneToken).get(`/api/app/v1/load?from=${from}&to=${from + 10_000}`);
    expect(own.body.data).toMatchObject({ app: 'one', perSecond: [0, 1, 1, 1, 1, 1, 0, 0, 0, 0] });
    expect((await h.as().get(`/api/app/v1/load?app=two&from=${from}&to=${from + 3_000}`)).body.data.perSecond).toEqual([3, 1, 1]);
    expect((await h.as(oneToken).get('/api/app/v1/load?app=two')).status).toBe(403);
    const wide = await h.as().get(`/api/app/v1/load?from=${from}&to=${from + 3_601_000}`);
    expect(wide.status).toBe(400);
    expect(wide.body.msg).toMatch(/^to: /);
    expect((await h.as().get(`/api/app/v1/load?from=${from}&to=${from}`)).status).toBe(400);
    expect((await h.as().get('/api/app/v1/load?from=abc')).body.msg).toContain('from');
  });
});

describe('api admission with autoSpread (real MariaDB, Redis, Pulsar)', () => {
  const h = new ApiHarness({ TIMER_CAPACITY_FIRES_PER_SEC: '2' });
  const { body, create, enable, createEnabled, snapshot } = helpers(h);
  const view = async (id: number) => (await h.as().get(`${def}?app=spread&id=${id}`)).body.data as { autoSpread: boolean; spreadOffsetMs: number | null; version: number };

  beforeAll(async () => {
    await h.start();
    expect((await h.as().post('/api/app/v1/apps', { app: 'spread' })).body.code).toBe(0);
  });
  afterAll(() => h.stop());

  it('moves a timer that would overload a second to the least-loaded offset within its jitter, counts it there, and refuses when none fits', async () => {
    h.clock.set(T);
    const tens = { cron: '*/10 * * * * *' };
    // Seconds 0, 10, 20, ... are full (2 of 2).
    await createEnabled('spread', tens);
    await createEnabled('spread', tens);
    const before = await snapshot();
    const plain = await h.as().post(def, body('spread', { ...tens, jitterMs: 5_000 }));
    expect(plain.status).toBe(429);
    expect(plain.body.msg).toBe(
      `admission: the second ${new Date(T).toISOString()} would have 3 fires (2 scheduled + 1 of this timer), over the capacity of 2 fires/s (TIMER_CAPACITY_FIRES_PER_SEC)`,
    );
    const noJitter = await h.as().post(def, body('spread', { ...tens, autoSpread: true }));
    expect(noJitter.status).toBe(400);
    expect(noJitter.body.msg).toMatch(/^autoSpread needs jitterMs > 0/);
    const narrow = await h.as().post(def, body('spread', { ...tens, jitterMs: 1_000, autoSpread: true }));
    expect(narrow.status).toBe(429);
    expect(narrow.body.msg).toContain(`autoSpread: no offset within jitterMs (1000 ms) fits, the least loaded (+0 ms) would put 3 fires on the second ${new Date(T).toISOString()}`);
    expect(await snapshot()).toEqual(before);

    // +1 s .. +4 s are empty: the smallest of them. Chosen again on enable (the same load: the same offset).
    const first = await create('spread', { ...tens, jitterMs: 5_000, autoSpread: true });
    expect(await view(first)).toMatchObject({ autoSpread: true, spreadOffsetMs: 1_000 });
    expect((await enable('spread', first)).body).toMatchObject({ code: 0, data: { changed: true } });
    expect(await view(first)).toMatchObject({ spreadOffsetMs: 1_000 });
    // +1 s now has 1, +2 s none: the least loaded is +2 s (not merely the first that fits).
    const second = await createEnabled('spread', { ...tens, jitterMs: 5_000, autoSpread: true });
    expect(await view(second)).toMatchObject({ spreadOffsetMs: 2_000 });
    // Counted where they are delivered, by the admin's and the app's load alike.
    const from = T + 60_000;
    expect((await h.as().get(`/api/app/v1/load?app=spread&from=${from}&to=${from + 4_000}`)).body.data.perSecond).toEqual([2, 1, 1, 0]);
    expect((await h.as().get(`/api/app/v1/load?from=${from - 1_000}&to=${from + 3_000}`)).body.data.perSecond).toEqual([0, 2, 1, 1]);
    const versions = await h.as().get(`${def}/versions?app=spread&id=${second}`);
    expect(versions.body.data[0]).toMatchObject({ change: 'enable', autoSpread: true, spreadOffsetMs: 2_000 });

    // An edit that keeps the schedule and the jitter keeps the offset; turning autoSpread off is admitted again (offset 0: full).
    const { version } = await view(first);
    expect((await h.as().patch(def, { app: 'spread', id: first, version, name: 'renamed' })).body).toMatchObject({ code: 0 });
    expect(await view(first)).toMatchObject({ spreadOffsetMs: 1_000, version: version + 1 });
    const mid = await snapshot();
    const off = await h.as().patch(def, { app: 'spread', id: first, version: version + 1, autoSpread: false });
    expect(off.status).toBe(429);
    expect(off.body.msg).toContain('would have 3 fires (2 scheduled + 1 of this timer)');
    const zero = await h.as().patch(def, { app: 'spread', id: first, version: version + 1, jitterMs: 0 });
    expect(zero.status).toBe(400);
    expect(zero.body.msg).toMatch(/^autoSpread needs jitterMs > 0/);
    expect(await snapshot()).toEqual(mid);
  });

  it('admits an enabled batch as its enables: moved autoSpread timers keep their offsets in the row and version 2, a refusal writes nothing', async () => {
    h.clock.set(T);
    expect((await h.as().post('/api/app/v1/apps', { app: 'spread-batch' })).body.code).toBe(0);
    // Seconds 5, 15, 25, ...: empty before the batch (the timers above fire at 0-2 s past each 10 s).
    const fives = { cron: '5-59/10 * * * * *' };
    const item = (name: string, over: Record<string, unknown> = {}) => ({ name, ...fives, notifyHTTPParam: { url: HOOK, method: 'POST' }, ...over });
    const spread = { jitterMs: 3_000, autoSpread: true };
    const batch = (timers: Record<string, unknown>[]) => h.as().post(`${def}/batch`, { app: 'spread-batch', enable: true, timers });
    const ok = await batch([item('a'), item('b'), item('moved-1', spread), item('moved-2', spread), item('fits', { ...spread, cron: '9-59/10 * * * * *' })]);
    expect(ok.body.code).toBe(0);
    const ids = (ok.body.data.timers as { id: number; version: number; enabled: boolean }[]).map((t) => {
      expect(t).toMatchObject({ version: 2, enabled: true });
      return t.id;
    });
    const views = await Promise.all(ids.map(async (id) => (await h.as().get(`${def}?app=spread-batch&id=${id}`)).body.data as { spreadOffsetMs: number | null; status: number; version: number }));
    expect(views.map((v) => v.spreadOffsetMs)).toEqual([null, null, 1_000, 2_000, 0]);
    for (const [i, id] of ids.entries()) {
      const versions = (await h.as().get(`${def}/versions?app=spread-batch&id=${id}`)).body.data as { version: number; change: string; status: number; spreadOffsetMs: number | null }[];
      expect(versions.map((v) => [v.version, v.change, v.status, v.spreadOffsetMs])).toEqual([
        [2, 'enable', 2, views[i].spreadOffsetMs],
        [1, 'create', 1, null],
      ]);
    }
    // Counted where they are delivered.
    const from = T + 65_000;
    expect((await h.as().get(`/api/app/v1/load?app=spread-batch&from=${from}&to=${from + 5_000}`)).body.data.perSecond).toEqual([2, 1, 1, 0, 1]);

    // The second is full and 1 s of jitter has no other offset: refused under the app's lock, after its
    // enabled row was inserted, which the rollback takes away with the rest.
    const before = await snapshot();
    const refused = await batch([item('c', { cron: '9-59/10 * * * * *' }), item('d', { jitterMs: 1_000, autoSpread: true })]);
    expect(refused.status).toBe(429);
    expect(refused.body.msg).toMatch(/^timers\[1\]: admission: the second .* would have 3 fires \(2 scheduled \+ 1 of this timer\)/);
    expect(await snapshot()).toEqual(before);
  });
});
