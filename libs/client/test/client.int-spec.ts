import { readFileSync, writeFileSync } from 'fs';
import { createServer, IncomingHttpHeaders, Server } from 'http';
import { AddressInfo } from 'net';
import { ErrorCodes, RECORD_STATUSES, RecordStatus, ROUTES, TimerApiError, TimerClient, verifyCallbackSignature } from '../src';
// The e2e Stack is what starts the built roles as processes; it lives in e2e/support, which is no lib.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { pollUntil, Stack } from '../../../e2e/support';
import { clientTypesOf, GENERATED_TYPES } from './openapi-types';

// @timer/client against the built roles as processes (e2e Stack: real MariaDB, Redis, Pulsar): its route
// table against the OpenAPI document the api serves, and one timer's life through every timer route,
// its fire delivered to a local endpoint whose X-Timer-Signature the client's verifier accepts.
jest.setTimeout(60_000);

const TOKEN = 'client-admin-token-0123456789';
const APP = 'client-it';

let stack: Stack;
let callbacks: Server;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let client: TimerClient;

beforeAll(async () => {
  callbacks = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => callbacks.listen(0, '127.0.0.1', r));
  stack = await Stack.start({ adminToken: TOKEN, env: { TIMER_WINDOW_MINUTES: '5' } });
  client = new TimerClient({ baseUrl: `http://127.0.0.1:${stack.port('api')}`, token: TOKEN });
});

afterAll(async () => {
  await stack?.stop();
  await new Promise((r) => callbacks?.close(r));
});

describe('@timer/client against the running api', () => {
  it('has exactly the operations of the served OpenAPI document, each a method of TimerClient', async () => {
    const doc = (await (await fetch(`http://127.0.0.1:${stack.port('api')}/api/docs-json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const served = Object.entries(doc.paths)
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => `${op.operationId} ${method.toUpperCase()} ${path}`))
      .sort();
    const ours = Object.entries(ROUTES)
      .map(([id, r]) => `${id} ${r.method} ${r.path}`)
      .sort();
    expect(ours).toEqual(served);
    for (const id of Object.keys(ROUTES)) expect(typeof (TimerClient.prototype as unknown as Record<string, unknown>)[id]).toBe('function');
  });

  it('has the generated types of the served OpenAPI document (npm run client:types regenerates them)', async () => {
    const doc = (await (await fetch(`http://127.0.0.1:${stack.port('api')}/api/docs-json`)).json()) as object;
    const fresh = clientTypesOf(doc);
    // The test process's own switch, set by `npm run client:types`: writes the file instead of comparing.
    if (process.env.TIMER_CLIENT_TYPES_WRITE === '1') writeFileSync(GENERATED_TYPES, fresh);
    const stale = readFileSync(GENERATED_TYPES, 'utf8') !== fresh;
    expect({ stale, fix: 'npm run client:types' }).toEqual({ stale: false, fix: 'npm run client:types' });
  });

  it('has the record statuses of the served OpenAPI document: numbers, names and meanings', async () => {
    type Doc = { components: { schemas: Record<string, { properties: Record<string, { enum?: number[]; description?: string }> }> } };
    const doc = (await (await fetch(`http://127.0.0.1:${stack.port('api')}/api/docs-json`)).json()) as Doc;
    const served = doc.components.schemas.TaskView.properties.status;
    expect(served.enum).toEqual(RECORD_STATUSES.map((s) => s.value));
    expect(served.description).toBe(RECORD_STATUSES.map((s) => `${s.value} ${s.name}: ${s.meaning}`).join('; '));
    expect(Object.values(RecordStatus)).toEqual(RECORD_STATUSES.map((s) => s.value));
  });

  it('takes a timer through create, get, patch, enable, run, records, versions, disable and delete', async () => {
    const { secret } = await client.createApp({ app: APP }).then(() => client.rotateAppSecret({ app: APP }));
    const def = {
      app: APP,
      name: 'round-trip',
      cron: '0 0 1 1 *',
      timeZone: 'Europe/Berlin',
      notifyHTTPParam: { url: `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/hook`, method: 'post' as const, body: '{"hello":"world"}' },
    };
    const created = await client.createTimer(def, { idempotencyKey: 'rt-1' });
    expect(created).toMatchObject({ version: 1, replayed: false });
    expect(await client.createTimer(def, { idempotencyKey: 'rt-1' })).toEqual({ ...created, replayed: true });
    const ref = { id: created.id, app: APP };

    const timer = await client.getTimer(ref);
    expect(timer).toMatchObject({ id: created.id, name: 'round-trip', status: 1, version: 1, timeZone: 'Europe/Berlin', notifyHTTPParam: { method: 'POST' } });
    expect(timer.nextFireTimes?.length).toBeGreaterThan(0);
    const preview = await client.previewFireTimes({ cron: timer.cron!, timeZone: timer.timeZone, count: 3 });
    expect(preview.fires.map((f) => f.at)).toEqual(timer.nextFireTimes?.slice(0, 3));

    const bad = (await client.createTimer({ ...def, name: 'bad', notifyHTTPParam: { ...def.notifyHTTPParam, url: 'ftp://x' } }).catch((e: unknown) => e)) as TimerApiError;
    expect(bad).toBeInstanceOf(TimerApiError);
    expect(bad).toMatchObject({ status: 400, code: ErrorCodes.VALIDATION, field: 'notifyHTTPParam.url' });

    expect(await client.patchTimer({ ...ref, version: 1, name: 'round-trip-2' })).toMatchObject({ version: 2, changed: true });
    const stale = (await client.patchTimer({ ...ref, version: 1, name: 'x' }).catch((e: unknown) => e)) as TimerApiError;
    expect(stale).toMatchObject({ status: 409, code: ErrorCodes.STALE_VERSION, currentVersion: 2 });
    // The timer's own failure webhook: set by a PATCH, shown by GET (header values as lists), removed by null.
    const hook = { url: 'https://hooks.example.com/round-trip-failures', headers: { Authorization: 'Bearer hook' } };
    expect(await client.patchTimer({ ...ref, version: 2, failureWebhook: hook })).toMatchObject({ version: 3, changed: true });
    expect((await client.getTimer(ref)).failureWebhook).toEqual({ url: hook.url, headers: { Authorization: ['Bearer hook'] } });
    expect(await client.patchTimer({ ...ref, version: 3, failureWebhook: null })).toMatchObject({ version: 4, changed: true });
    expect((await client.getTimer(ref)).failureWebhook).toBeNull();

    expect(await client.enableTimer(ref)).toMatchObject({ changed: true, version: 5 });
    const fire = await client.runTimer(ref);
    expect(fire.fireId).toBe(`${created.id}-${fire.runAt}`);
    const record = await pollUntil(async () => (await client.listRecords({ app: APP, fireID: fire.fireId })).data.find((r) => r.status === RecordStatus.Succeeded), 20_000);
    expect(record).toMatchObject({ timerID: created.id, httpStatus: 200, attempt: 1 });
    expect((await client.listRecords({ app: APP, timerID: created.id })).total).toBeGreaterThanOrEqual(1);

    const delivery = received.find((d) => d.headers['x-timer-fire-id'] === fire.fireId);
    expect(delivery?.body).toBe('{"hello":"world"}');
    const signature = String(delivery?.headers['x-timer-signature']);
    expect(await verifyCallbackSignature(secret, signature, delivery!.body)).toBe(true);
    expect(await verifyCallbackSignature(secret, signature, '{"hello":"mallory"}')).toBe(false);

    const versions = await client.listTimerVersions({ ...ref, pageSize: 2 });
    expect(versions.total).toBe(5);
    expect(versions.data.map((v) => v.change)).toEqual(['enable', 'patch']);
    expect((await client.listTimers({ app: APP, name: 'round' })).data.map((t) => t.id)).toEqual([created.id]);

    expect(await client.disableTimer(ref)).toMatchObject({ changed: true, version: 6 });
    await client.deleteTimer(ref);
    await expect(client.getTimer(ref)).rejects.toMatchObject({ status: 404, code: ErrorCodes.NOT_FOUND });
  });

  it('issues and revokes an app token, pauses and resumes the app, reads accounting, the overview and health', async () => {
    const issued = await client.issueAppToken({ app: APP, label: 'it' });
    const asApp = new TimerClient({ baseUrl: `http://127.0.0.1:${stack.port('api')}`, token: issued.token });
    expect((await asApp.listTimers({ app: APP })).total).toBe(0);
    await expect(asApp.listTimers({ app: 'someone-else' })).rejects.toMatchObject({ status: 403 });
    expect(await asApp.pauseApp({ app: APP })).toMatchObject({ app: APP, changed: true, paused: true });
    expect(await asApp.resumeApp({ app: APP })).toMatchObject({ changed: true, paused: false });
    expect((await asApp.getAppAccounting({ app: APP })).app).toBe(APP);
    expect(await asApp.listDeadLetters({ app: APP })).toEqual({ data: [], total: 0 });
    expect(await asApp.purgeDeadLetters({ app: APP, all: true })).toEqual({ purged: 0 });
    expect((await client.getAppQuota({ app: APP })).usage.timers).toBe(0);
    expect((await client.getProjectedLoad({ app: APP })).app).toBe(APP);
    // The overview of the last hour: the app's run-now fire of the test before, delivered, with its lateness.
    const overview = await asApp.getOverview();
    expect(overview).toMatchObject({ app: APP, bucketMs: 60_000, backlog: { capped: false } });
    expect(overview.buckets.length).toBeGreaterThanOrEqual(60);
    expect(overview.totals.delivered).toBeGreaterThanOrEqual(1);
    expect(overview.totals.latenessP99Ms).toEqual(expect.any(Number));
    await expect(asApp.getOverview({ app: 'someone-else' })).rejects.toMatchObject({ status: 403 });
    await expect(client.getOverview({ bucketMs: 10 })).rejects.toMatchObject({ status: 400, field: 'bucketMs' });
    await client.revokeAppToken({ app: APP, tokenId: issued.id });
    await expect(asApp.listTimers({ app: APP })).rejects.toMatchObject({ status: 401, code: ErrorCodes.UNAUTHORIZED });

    expect(await client.getReadiness()).toMatchObject({ ok: true, status: 'ok' });
    expect(await client.getLiveness()).toEqual({ ok: true, status: 'ok' });
    expect(await client.getMetrics()).toContain('# TYPE');
  });
});
